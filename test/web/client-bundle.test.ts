/**
 * The phone page's script stays small: it is evaluated before the page can
 * draw a card, and on a phone-speed CPU every 100 KB of it is most of a
 * second (it was 360 KB, Effect included, before this test). A shared module that imports the schema library (Effect) would
 * bring ~300 KB with it; this catches that at the import that does it.
 */
import { describe, expect, it } from "vitest"
import { build } from "esbuild"

describe("the phone page's script", () => {
  it("bundles without Effect or any other server library, under 200 KB minified", async () => {
    const out = await build({
      entryPoints: ["src/web/client/main.ts"],
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      minify: true,
      metafile: true,
      logLevel: "silent"
    })
    const packages = Object.keys(out.metafile.inputs).filter((p) => p.includes("node_modules/"))
    expect(packages.filter((p) => /node_modules\/(effect|@effect|fast-check)\//.test(p))).toEqual([])
    expect(out.outputFiles[0]!.contents.byteLength).toBeLessThan(200 * 1024)
  }, 60_000)
})
