// Runs every benchmark in this folder (TypeScript ones bundled on the fly).
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"

const only = process.argv[2]
/** Not benchmarks of their own: helpers, and comparisons that need two builds named. */
const NOT_RUN = new Set(["lib.mjs", "run-all.mjs", "page-ab.mjs"])
for (const file of readdirSync("scripts/bench").sort()) {
  if (file.startsWith(".") || NOT_RUN.has(file) || !/\.(mjs|ts)$/.test(file)) continue
  if (only && !file.startsWith(only)) continue
  let target = join("scripts/bench", file)
  if (file.endsWith(".ts")) {
    const out = join("scripts/bench", `.${file}.bundle.mjs`)
    await build({ entryPoints: [target], bundle: true, platform: "node", format: "esm", outfile: out, packages: "external", logLevel: "error" })
    target = out
  }
  spawnSync(process.execPath, [target], { stdio: "inherit" })
}
