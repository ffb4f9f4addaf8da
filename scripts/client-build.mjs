// The phone page's script, compiled from src/web/client/ by esbuild: one
// definition for the build (scripts/build.mjs inlines the files into the CLI
// bundle) and for the test that keeps the page's first script small.
import { build } from "esbuild"
import { createHash } from "node:crypto"

const common = {
  bundle: true,
  write: false,
  format: "esm",
  platform: "browser",
  // Phones a few years old: Safari 15, Chrome 100.
  target: ["safari15", "chrome100"],
  minify: process.env.MAGI_CLIENT_PLAIN !== "1",
  legalComments: "none",
  logLevel: "warning"
}

/**
 * Modules the page loads later with `import()`, each built on its own (no
 * code shared with the entry, so `app.js` starts without a second request):
 * markdown-it comes after the first screen (see src/web/client/richText.ts).
 */
const LATER = { "./markdown.js": "src/web/client/markdown.ts" }

/**
 * `{ "app.js": text, "chunks/markdown-<hash>.js": text }`: the page's entry
 * and the modules it imports later, as the server serves them from `/`.
 * A chunk's name carries a hash of its text, so a browser may keep it for
 * good and an open page never mixes two builds.
 *
 * MAGI_CLIENT_PLAIN=1 leaves them unminified, to read a browser profile by.
 */
export const buildClient = async ({ metafile = false } = {}) => {
  const files = {}
  const metafiles = {}
  /** The import specifier in the page's source → the chunk's path from the entry. */
  const chunkFor = {}
  for (const [specifier, entry] of Object.entries(LATER)) {
    const out = await build({ ...common, entryPoints: [entry], metafile })
    const text = out.outputFiles[0].text
    const hash = createHash("sha256").update(text).digest("hex").slice(0, 10)
    const name = entry.replace(/^.*\/|\.ts$/g, "")
    const path = `chunks/${name}-${hash}.js`
    files[path] = text
    metafiles[path] = out.metafile
    chunkFor[specifier] = `./${path}`
  }
  const laterChunks = {
    name: "later-chunks",
    setup(b) {
      b.onResolve(
        { filter: /.*/ },
        (args) => args.kind === "dynamic-import" && chunkFor[args.path] !== undefined ? { path: chunkFor[args.path], external: true } : undefined
      )
    }
  }
  const app = await build({ ...common, entryPoints: ["src/web/client/main.ts"], metafile, plugins: [laterChunks] })
  files["app.js"] = app.outputFiles[0].text
  metafiles["app.js"] = app.metafile
  return { files, metafiles }
}
