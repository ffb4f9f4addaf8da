#!/usr/bin/env node
// magi's launcher: runs the bundled CLI (magi.cjs) through V8's code cache.
// Compiling the bundle is most of a cold start, and an agent pays a cold
// start on every `magi ask --wait` slice; with the cache, V8 skips it. The
// cache is written after the first run (atomically, best effort: a read-only
// install simply runs uncached) and rewritten whenever V8 rejects it, which
// it does after a Node upgrade or a rebuild.
import { readFileSync, renameSync, writeFileSync } from "node:fs"
import Module, { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Script } from "node:vm"

const dir = dirname(fileURLToPath(import.meta.url))
const file = join(dir, "magi.cjs")
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
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(file), module, file, dir)
