// Bundles the CLI into one file so `magi` starts without resolving hundreds of
// modules from node_modules: start-up time is what an agent pays on every
// `magi ask --wait` slice.
import { build } from "esbuild"
import { chmod, mkdir } from "node:fs/promises"

await mkdir("dist", { recursive: true })
await build({
  entryPoints: { magi: "src/bin.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  minify: true,
  sourcemap: "linked",
  legalComments: "none",
  banner: {
    // Bundled CommonJS dependencies still call `require`; give them one.
    js: "#!/usr/bin/env node\nimport { createRequire as __magiRequire } from 'node:module';const require = __magiRequire(import.meta.url);"
  },
  logLevel: "warning"
})
await chmod("dist/magi.js", 0o755)
