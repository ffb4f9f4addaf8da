/**
 * What the phone downloads before it can show a question: the page's script
 * stays free of the server's libraries. One value import of a domain module
 * that uses `effect/Schema` once put the whole schema library (and
 * fast-check) into the page, tripling it.
 */
import { describe, expect, it } from "vitest"
import { build } from "esbuild"

describe("the phone page's script", () => {
  it("bundles no server library (effect, fast-check), only its own code and markdown-it", async () => {
    const result = await build({
      entryPoints: ["src/web/client/main.ts"],
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      metafile: true,
      logLevel: "error"
    })
    const packages = new Set(
      Object.keys(result.metafile.inputs)
        .filter((path) => path.includes("node_modules/"))
        .map((path) => path.split("node_modules/").at(-1)!.split("/")[0]!)
    )
    expect([...packages].filter((p) => p === "effect" || p === "@effect" || p === "fast-check")).toEqual([])
    expect(packages.has("markdown-it")).toBe(true)
  })
})
