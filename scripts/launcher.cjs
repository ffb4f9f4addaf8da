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
const { readFileSync, renameSync, writeFileSync } = require("node:fs")
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
if (cachedData === undefined || script.cachedDataRejected) {
  process.once("beforeExit", () => {
    try {
      const tmp = `${cacheFile}.${process.pid}.tmp`
      writeFileSync(tmp, script.createCachedData())
      renameSync(tmp, cacheFile)
    } catch {}
  })
}
const bundle = { exports: {} }
script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, __dirname)
