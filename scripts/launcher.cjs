#!/usr/bin/env node
// magi's launcher: runs the bundled CLI (magi.cjs) through V8's code cache.
// Compiling the bundle is most of a cold start, and an agent pays a cold
// start on every `magi ask --wait` slice; with the cache, V8 skips it. The
// cache is written after the first run (atomically, best effort: a read-only
// install simply runs uncached) and rewritten whenever V8 rejects it, which
// it does after a Node upgrade or a rebuild. CommonJS (dist/ has its own
// package.json saying so), because starting Node's ESM loader costs more than
// this whole file does.
"use strict"
const { accessSync, constants, existsSync, readFileSync, renameSync, rmSync, writeFileSync } = require("node:fs")
const Module = require("node:module")
const { join } = require("node:path")
const { Script } = require("node:vm")

const file = join(__dirname, "magi.cjs")
const cacheFile = `${file}.cache`
let cachedData
try {
  cachedData = readFileSync(cacheFile)
} catch {}
const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData })
// The cache holds what the process that wrote it compiled, and the build's
// (`magi --help`) never loads the PostgreSQL driver: on that store every
// start compiled it again (pg, its protocol, @effect/sql-pg; 30–40 ms under
// load, docs/benchmarks.md). So the first process that loads the driver
// (src/platform/Postgres.ts marks it) writes the cache once more, with it,
// and the file beside the cache says so. A home-folder install never does.
const driverFile = `${cacheFile}.driver`
const fresh = cachedData === undefined || script.cachedDataRejected
if (fresh || !existsSync(driverFile)) {
  process.once("beforeExit", () => {
    const driver = globalThis[Symbol.for("magi.driverLoaded")] === true
    if (!fresh && !driver) return
    try {
      // A read-only install runs uncached without working out a cache it cannot keep.
      accessSync(__dirname, constants.W_OK)
      const tmp = `${cacheFile}.${process.pid}.tmp`
      writeFileSync(tmp, script.createCachedData())
      renameSync(tmp, cacheFile)
      if (driver) writeFileSync(driverFile, "")
      else rmSync(driverFile, { force: true })
    } catch {}
  })
}
const bundle = { exports: {} }
script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, __dirname)
