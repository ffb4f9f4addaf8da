// Bundles the CLI into one file so `magi` starts without resolving hundreds of
// modules from node_modules: start-up time is what an agent pays on every
// `magi ask --wait` slice.
import { build } from "esbuild"
import { chmod, copyFile, mkdir, rm } from "node:fs/promises"

/**
 * @effect/cli can read option values from YAML, TOML and INI files, and its
 * parsers load eagerly. magi never uses that feature, so they are replaced by
 * a stub that says so, which keeps half a megabyte out of every start-up.
 */
const unusedParsers = {
  name: "unused-cli-file-parsers",
  setup(b) {
    b.onResolve({ filter: /^(yaml|toml|ini)$/ }, (args) =>
      args.importer.includes("@effect/cli") ? { path: args.path, namespace: "unused" } : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "unused" }, (args) => ({
      contents: `const no = () => { throw new Error("magi does not read ${args.path} option files") }
export const parse = no; export const decode = no; export default { parse: no, decode: no }`,
      loader: "js"
    }))
  }
}

await mkdir("dist", { recursive: true })
await build({
  entryPoints: { magi: "src/bin.ts" },
  outfile: "dist/magi.cjs",
  bundle: true,
  platform: "node",
  target: "node20",
  // CommonJS so the launcher can compile it through `vm.Script` with V8's
  // code cache: compiling the bundle is most of a cold start otherwise.
  format: "cjs",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  plugins: [unusedParsers]
})
await rm("dist/magi.cjs.cache", { force: true })
await rm("dist/magi.js.map", { force: true })
await copyFile("scripts/launcher.mjs", "dist/magi.js")
await chmod("dist/magi.js", 0o755)

// Run once so the code cache exists before the first real call.
import { spawnSync } from "node:child_process"
spawnSync(process.execPath, ["dist/magi.js", "--help"], { stdio: "ignore" })
