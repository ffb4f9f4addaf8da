// npm packs package.json as it is on disk, and its `prepare` (which builds
// dist/ and patches TypeScript on `npm ci` in a clone) means nothing to an
// installed package: worse, npm 11's `npm i -g` of the tarball warns about
// install scripts and asks for --allow-scripts. So `prepack` writes the
// manifest without its install-time scripts and `postpack` puts the
// repository's back; neither runs on `npm ci`. npm offers no setting that
// drops a script from the packed manifest (publishConfig does not).
//
//   node scripts/pack-manifest.mjs strip | restore
import { existsSync } from "node:fs"
import { readFile, rm, writeFile } from "node:fs/promises"

const MANIFEST = "package.json"
/** The repository's own manifest while a pack runs (not in `files`, so never packed; ignored by git). */
const SAVED = "package.json.unpacked"
/** What npm runs when a package is installed (npm's docs, "Life Cycle Operation Order"). */
export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"]

const strip = async () => {
  // A pack that died before its postpack left the saved manifest: it, not the stripped one, is the repository's.
  const original = existsSync(SAVED) ? await readFile(SAVED, "utf8") : await readFile(MANIFEST, "utf8")
  await writeFile(SAVED, original)
  const manifest = JSON.parse(original)
  for (const name of INSTALL_SCRIPTS) delete manifest.scripts?.[name]
  await writeFile(MANIFEST, JSON.stringify(manifest, null, 2) + "\n")
}

const restore = async () => {
  if (!existsSync(SAVED)) return
  await writeFile(MANIFEST, await readFile(SAVED, "utf8"))
  await rm(SAVED)
}

const step = process.argv[2]
if (step === "strip") await strip()
else if (step === "restore") await restore()
else {
  console.error("usage: node scripts/pack-manifest.mjs strip | restore")
  process.exit(2)
}
