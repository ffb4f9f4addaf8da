// Runs every benchmark in this folder (TypeScript ones bundled on the fly).
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"

const only = process.argv[2]
for (const file of readdirSync("scripts/bench").sort()) {
  if (file.startsWith(".") || file === "lib.mjs" || file === "run-all.mjs" || !/\.(mjs|ts)$/.test(file)) continue
  if (only && !file.startsWith(only)) continue
  let target = join("scripts/bench", file)
  if (file.endsWith(".ts")) {
    const out = join("scripts/bench", `.${file}.bundle.mjs`)
    await build({ entryPoints: [target], bundle: true, platform: "node", format: "esm", outfile: out, packages: "external", logLevel: "error" })
    target = out
  }
  spawnSync(process.execPath, [target], { stdio: "inherit" })
}
