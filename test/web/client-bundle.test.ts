/**
 * The phone page's first script stays small and alone: it is evaluated
 * before the page can draw a card, and on a phone-speed CPU every 100 KB of
 * it is most of a second (it was 360 KB with Effect in it, then 149 KB with
 * markdown-it, which now comes after the first screen). A shared module
 * that imports the schema library (Effect) would bring ~300 KB with it; this
 * catches that at the import that does it.
 *
 * The cap was 80 KB until the run view grew its review, live, say and
 * landing sections (90,037 B minified, 30,594 B gzipped, stop 36): 96 KB now,
 * and the next step is the run view as a chunk of its own, not a higher cap.
 */
import { describe, expect, it } from "vitest"
// @ts-expect-error: a build script in plain JavaScript, without types
import { buildClient } from "../../scripts/client-build.mjs"

interface Built {
  readonly files: Record<string, string>
  readonly metafiles: Record<string, { readonly inputs: Record<string, unknown> }>
}

describe("the phone page's script", () => {
  it("starts from one file under 96 KB, without Effect or any other server library, and fetches markdown-it later", async () => {
    const { files, metafiles } = (await buildClient({ metafile: true })) as Built
    const app = files["app.js"]!
    expect(Buffer.byteLength(app)).toBeLessThan(96 * 1024)
    // No static import: the first screen needs no second request.
    expect(app).not.toMatch(/(^|[;}\s])import\s*["{*\w]/)
    const chunks = Object.keys(files).filter((f) => f !== "app.js")
    expect(chunks).toEqual([expect.stringMatching(/^chunks\/markdown-[0-9a-f]{10}\.js$/)])
    // The entry names the chunk it loads, and markdown-it is in the chunk only.
    expect(app).toContain(`import("./${chunks[0]}")`)
    const packagesOf = (file: string) => Object.keys(metafiles[file]!.inputs).filter((p) => p.includes("node_modules/"))
    expect(packagesOf("app.js")).toEqual([])
    expect(packagesOf(chunks[0]!).some((p) => p.includes("node_modules/markdown-it/"))).toBe(true)
    for (const file of Object.keys(files))
      expect(packagesOf(file).filter((p) => /node_modules\/(effect|@effect|fast-check)\//.test(p))).toEqual([])
  }, 60_000)
})
