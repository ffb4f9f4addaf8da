// Bundles the CLI into one file so `magi` starts without resolving hundreds of
// modules from node_modules: start-up time is what an agent pays on every
// `magi ask --wait` slice.
import { build } from "esbuild"
import { buildClient } from "./client-build.mjs"
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises"

/**
 * @effect/cli can read option values from YAML, TOML and INI files, and its
 * parsers load eagerly. magi never uses that feature, so they are replaced by
 * a stub that says so, which keeps half a megabyte out of every start-up.
 */
const unusedParsers = {
  name: "unused-cli-file-parsers",
  setup(b) {
    b.onResolve({ filter: /^(yaml|toml|ini)$/ }, (args) => args.importer.includes("@effect/cli") ? { path: args.path, namespace: "unused" } : undefined)
    b.onLoad({ filter: /.*/, namespace: "unused" }, (args) => ({
      contents: `const no = () => { throw new Error("magi does not read ${args.path} option files") }
export const parse = no; export const decode = no; export default { parse: no, decode: no }`,
      loader: "js"
    }))
  }
}

/**
 * `pg` asks at load whether it runs in a Cloudflare Worker by constructing a
 * `Response`, and the first touch of that global makes Node evaluate its
 * whole fetch implementation (undici): about 30 ms of every command on the
 * PostgreSQL store, for an answer that is always no under Node. The check is
 * answered here instead; a `pg` whose check reads differently fails the build
 * rather than quietly keeping the cost.
 */
const pgOnNode = {
  name: "pg-on-node",
  setup(b) {
    b.onLoad({ filter: /node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      const check = "function isCloudflareRuntime() {"
      if (!source.includes(check)) throw new Error(`pg's ${args.path} no longer has ${check}: see pgOnNode in scripts/build.mjs`)
      return { contents: source.replace(check, `${check}\n  return false // magi runs on Node (scripts/build.mjs)`), loader: "js" }
    })
  }
}

/**
 * The phone page's client (scripts/client-build.mjs), inlined into the CLI
 * bundle as the module `magi:web-client`: `magi web` serves it from memory,
 * so an installed magi is one file and the page fetches nothing from
 * anywhere else.
 */
const stylesheets = ["src/web/client/styles.css", "src/web/client/card.css"]
const webClient = {
  name: "magi-web-client",
  setup(b) {
    b.onResolve({ filter: /^magi:web-client$/ }, (args) => ({ path: args.path, namespace: "magi-web-client" }))
    b.onLoad({ filter: /.*/, namespace: "magi-web-client" }, async () => {
      const { files } = await buildClient()
      // The page's frame, then the card's own rules (src/web/client/card.css).
      const styles = (await Promise.all(stylesheets.map((f) => readFile(f, "utf8")))).join("\n")
      return {
        contents: `export const scripts = ${JSON.stringify(files)}\nexport const styles = ${JSON.stringify(styles)}\n`,
        loader: "js",
        watchFiles: stylesheets
      }
    })
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
  // MAGI_BUILD_MINIFY=0 keeps every function's name, for reading a CPU
  // profile (`--cpu-prof`, scripts/bench/hosts.mjs's MAGI_BENCH_PROFILE).
  minify: process.env.MAGI_BUILD_MINIFY !== "0",
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  plugins: [unusedParsers, pgOnNode, webClient]
})
await rm("dist/magi.cjs.cache", { force: true })
await rm("dist/magi.js.map", { force: true })
await copyFile("scripts/launcher.cjs", "dist/magi.js")
// `magi` by name, for agents: magi puts dist/bin first on an agent's PATH so
// its `magi ask` is this build even where magi is not installed, and names
// it by this absolute path in the prompt. A shell script rather than a link
// to magi.js, whose `#!/usr/bin/env node` needs node on PATH: an agent whose
// shell is a login shell (codex's `bash -lc`) has PATH reset by the profile,
// which leaves out nvm's node; magi tells its agents its own node instead
// (MAGI_NODEJS).
await mkdir("dist/bin", { recursive: true })
await rm("dist/bin/magi", { force: true })
await writeFile(
  "dist/bin/magi",
  `#!/bin/sh
# magi for the agents magi starts; see scripts/build.mjs.
exec "\${MAGI_NODEJS:-node}" "\${0%/*}/../magi.js" "$@"
`,
  { mode: 0o755 }
)
// dist/ is CommonJS, whatever the project's own package.json says.
await writeFile("dist/package.json", '{ "type": "commonjs" }\n')
await chmod("dist/magi.js", 0o755)

// Run once so the code cache exists before the first real call.
import { spawnSync } from "node:child_process"
spawnSync(process.execPath, ["dist/magi.js", "--help"], { stdio: "ignore" })
