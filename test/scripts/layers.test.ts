/**
 * The layering check `npm run lint` runs (scripts/layers.mjs): on a small
 * source tree, an upward import and a circle of files are each refused by
 * name, and a tree that imports only downwards passes; on magi's own src/,
 * nothing is refused.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
// @ts-expect-error -- a plain ESM script, without types
import { problems } from "../../scripts/layers.mjs"

const found = problems as (src: string) => ReadonlyArray<string>

const tree = (files: Record<string, string>): string => {
  const src = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-layers-"))
  for (const [file, text] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(src, file)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(src, file), text)
  }
  return src
}

describe("the layering check", () => {
  it("passes imports that run down the layers", () => {
    const src = tree({
      "questions/Question.ts": `import { parseVersioned } from "../store/VersionedJson.js"\n`,
      "store/VersionedJson.ts": `export const parseVersioned = 1\n`
    })
    expect(found(src)).toEqual([])
  })

  it("refuses an upward import, a type-only one included, naming the file and both folders", () => {
    const src = tree({
      "questions/Question.ts": `export type Question = string\n`,
      "store/VersionedJson.ts": `import type { Question } from "../questions/Question.js"\nexport type Q = Question\n`
    })
    expect(found(src)).toContain(
      "src/store/VersionedJson.ts imports src/questions/Question.ts: store/ sits below questions/ and may not import it (ARCHITECTURE.md, Layers)"
    )
  })

  it("refuses two files of one folder that import each other, a dynamic import included", () => {
    const src = tree({
      "store/postgres/Postgres.ts": `const driver = () => import("./PostgresDriver.js")\n`,
      "store/postgres/PostgresDriver.ts": `import { x } from "./Postgres.js"\n`
    })
    expect(found(src)).toEqual(["files import each other: src/store/postgres/Postgres.ts ↔ src/store/postgres/PostgresDriver.ts"])
  })

  it("finds nothing to refuse in magi's own src/", () => {
    expect(found(NodePath.join(import.meta.dirname, "..", "..", "src"))).toEqual([])
  })
})
