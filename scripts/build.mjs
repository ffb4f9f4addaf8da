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
 * `import { Effect, Option } from "effect"`, as src writes it (the library's
 * own style), names the package's index, and the index evaluates every
 * module it re-exports: all of effect (Arbitrary, Channel, STM...) and with
 * it all of fast-check, at every start. Where the bundle still hoists
 * modules esbuild leaves the unused ones out, but the dynamic `import()`s
 * (the database driver, the web server...) make it wrap effect's modules so
 * they can run later, and a wrapped index runs each of its re-exports. So
 * src's imports from these indexes are rewritten here to the modules
 * themselves (`import * as Effect from "effect/Effect"`), which is what the
 * index would have handed over. The index is read for the names it
 * re-exports; a name it does not, or an import written in another form,
 * fails the build rather than quietly keeping the cost.
 */
const barrels = ["effect", "@effect/cli"]
const moduleImports = {
  name: "module-imports",
  async setup(b) {
    /** For each barrel, what each of its names is: `[module, "*"]` for `export * as X`, `[module, name]` for a named re-export. */
    const exportsOf = new Map()
    for (const barrel of barrels) {
      const index = await readFile(`node_modules/${barrel}/dist/esm/index.js`, "utf8")
      const names = new Map()
      for (const [, name, path] of index.matchAll(/export \* as (\w+) from "\.\/([\w/]+)\.js"/g)) names.set(name, [`${barrel}/${path}`, "*"])
      for (const [, list, path] of index.matchAll(/export \{([^}]*)\} from "\.\/([\w/]+)\.js"/g)) {
        for (const name of list.replace(/\/\*[\s\S]*?\*\//g, "").split(",").map((s) => s.trim()).filter(Boolean)) {
          names.set(name, [`${barrel}/${path}`, name])
        }
      }
      if (names.size < 10) throw new Error(`could not read what ${barrel}'s index re-exports: see moduleImports in scripts/build.mjs`)
      exportsOf.set(barrel, names)
    }
    const anyImport = new RegExp(`from "(${barrels.join("|")})"`)
    const oneImport = new RegExp(`^import (type )?\\{([^}]*)\\} from "(${barrels.join("|")})"$`, "gm")
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      if (!anyImport.test(source)) return undefined
      const rewritten = source.replace(oneImport, (_, typeOnly, list, barrel) => {
        // Types are erased by the build: an import of types only imports nothing.
        if (typeOnly) return ""
        return list.split(",").map((s) => s.trim()).filter((s) => s !== "" && !s.startsWith("type ")).map((name) => {
          const target = exportsOf.get(barrel).get(name)
          if (target === undefined) throw new Error(`${args.path}: ${barrel} has no module or re-export named ${name} (see moduleImports in scripts/build.mjs)`)
          const [module, exported] = target
          return exported === "*" ? `import * as ${name} from "${module}"` : `import { ${exported} } from "${module}"`
        }).join("; ")
      })
      if (anyImport.test(rewritten))
        throw new Error(`${args.path}: an import from ${barrels.join(" or ")} in a form moduleImports (scripts/build.mjs) does not rewrite`)
      return { contents: rewritten, loader: "ts" }
    })
  }
}

/**
 * `pg` signs in with SCRAM-SHA-256 through WebCrypto, whose first use in a
 * process sets up Node's WebCrypto layer: 10–20 ms of every command on the
 * PostgreSQL store, for work node:crypto does in about 2 ms. Its crypto
 * helpers are replaced by the same functions on node:crypto
 * (scripts/pg/crypto-node.cjs); a `pg` whose helpers export anything else
 * fails the build rather than signing in with a half-replaced module.
 */
const pgCryptoOnNode = {
  name: "pg-crypto-on-node",
  setup(b) {
    b.onLoad({ filter: /node_modules[\\/]pg[\\/]lib[\\/]crypto[\\/]utils\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      const exported = /module\.exports = \{([^}]*)\}/.exec(source)?.[1].split(",").map((s) => s.trim()).filter((s) => s !== "").sort().join(",")
      const ours = "deriveKey,hashByName,hmacSha256,md5,postgresMd5PasswordHash,randomBytes,sha256"
      if (exported !== ours) throw new Error(`pg's ${args.path} exports ${exported}, not ${ours}: see pgCryptoOnNode in scripts/build.mjs`)
      return { contents: await readFile("scripts/pg/crypto-node.cjs", "utf8"), loader: "js" }
    })
  }
}

/**
 * The phone page's client (scripts/client-build.mjs), inlined into the CLI
 * bundle as the module `magi:web-client`: `magi web` serves it from memory,
 * so an installed magi is one file and the page fetches nothing from
 * anywhere else.
 */
const stylesheets = ["src/web/client/styles.css", "src/web/client/card.css", "src/web/client/runs.css", "src/web/client/live.css"]
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
  plugins: [unusedParsers, pgOnNode, pgCryptoOnNode, moduleImports, webClient]
})
await rm("dist/magi.cjs.cache", { force: true })
await rm("dist/magi.cjs.cache.driver", { force: true })
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

// Write the code cache before the first real call, from one process that
// runs what is run most (src/bin.ts, MAGI_CODE_CACHE_WARMUP): the help, and
// the owner's listings, on an empty home made for it.
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
const warmHome = mkdtempSync(join(tmpdir(), "magi-build-"))
try {
  const warmed = spawnSync(process.execPath, [join(process.cwd(), "dist/magi.js")], {
    stdio: "ignore",
    env: {
      PATH: process.env.PATH,
      HOME: warmHome,
      MAGI_HOME: join(warmHome, "home"),
      XDG_CONFIG_HOME: join(warmHome, "config"),
      MAGI_CODE_CACHE_WARMUP: JSON.stringify([["--help"], ["answer", "--list"], ["runs"]])
    },
    cwd: warmHome
  })
  if (warmed.status !== 0) throw new Error(`the code cache's warm-up run of dist/magi.js exited with ${warmed.status ?? warmed.signal}`)
} finally {
  await rm(warmHome, { recursive: true, force: true })
}
