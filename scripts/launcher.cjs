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
// (its warm-up: the help and the listings, on an empty home) never loads the
// PostgreSQL driver: on that store every
// start compiled it again (pg, its protocol, @effect/sql-pg; 30–40 ms under
// load, docs/benchmarks.md). So the first process that loads the driver
// (src/store/postgres/PgConnection.ts marks it) writes the cache once more, with it,
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
// effect asks once, as it loads, whether V8 keeps one of its frames in a
// stack trace: it formats a stack and looks for the frame's name
// (isNotOptimizedAway in effect/Utils). Formatting a frame's position makes
// V8 first find every line end of the script it is in, this whole bundle:
// 4 to 15 ms of every start, for a question about a name. So the first stack
// formatted while the bundle loads gives the frames' names only, and puts
// Node's own formatting back as it does; every stack after it is as usual.
const formatStack = Error.prepareStackTrace
Error.prepareStackTrace = (error, frames) => {
  Error.prepareStackTrace = formatStack
  return `${error}\n${frames.map((frame) => `    at ${frame.getFunctionName() ?? "<anonymous>"}`).join("\n")}`
}
const bundle = { exports: {} }
try {
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, __dirname)
} finally {
  if (Error.prepareStackTrace !== formatStack) Error.prepareStackTrace = formatStack
}
