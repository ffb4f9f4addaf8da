// Runs every benchmark in this folder (TypeScript ones bundled on the fly).
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"

// `run-all.mjs NAME` runs the bench named NAME (`web` is web.mjs alone), else
// every bench whose name starts with NAME. Exits non-zero when any bench did.
const only = process.argv[2]
/** Not benchmarks of their own: helpers, and comparisons that need two builds named. */
const NOT_RUN = new Set(["lib.mjs", "questions.mjs", "run-all.mjs", "page-ab.mjs"])
const benches = readdirSync("scripts/bench")
  .sort()
  .filter((file) => !file.startsWith(".") && !NOT_RUN.has(file) && /\.(mjs|ts)$/.test(file))
const named = benches.filter((file) => file.replace(/\.(mjs|ts)$/, "") === only)
let failed = 0
for (const file of named.length > 0 ? named : benches) {
  if (only && !file.startsWith(only)) continue
  let target = join("scripts/bench", file)
  if (file.endsWith(".ts")) {
    const out = join("scripts/bench", `.${file}.bundle.mjs`)
    await build({ entryPoints: [target], bundle: true, platform: "node", format: "esm", outfile: out, packages: "external", logLevel: "error" })
    target = out
  }
  const { status, signal } = spawnSync(process.execPath, [target], { stdio: "inherit" })
  if (status !== 0) {
    failed++
    console.error(`${file} failed (${status ?? signal})`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
