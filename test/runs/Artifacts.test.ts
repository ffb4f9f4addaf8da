import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Artifacts from "../../src/runs/Artifacts.js"
import { tempDir } from "../support.js"

const entry = (name: string, size: number): Artifacts.ArtifactEntry => ({ name, size, modified_at: "2026-09-03T10:00:00Z" })

describe("a run's artifacts", () => {
  it("accepts the names turns write and refuses traversal, hidden and odd names", () => {
    for (const good of ["impl-1.out", "impl-12.prompt.md", "rev_A-2.err", "a"]) expect(Artifacts.validArtifactName(good), good).toBe(true)
    for (const bad of ["", ".secret", "../run.json", "a/b", "x..y", "..", "a b", "a\nb", "é.out", "x".repeat(129)])
      expect(Artifacts.validArtifactName(bad), bad).toBe(false)
  })

  it("takes the newest non-empty stdout as the last output, else the newest non-empty stderr, else none", () => {
    expect(Artifacts.latestOutput([entry("impl-1.out", 5), entry("impl-2.out", 9), entry("impl-2.err", 3)])).toEqual(Option.some("impl-2.out"))
    expect(Artifacts.latestOutput([entry("impl-1.out", 5), entry("impl-2.out", 0), entry("impl-2.err", 3)])).toEqual(Option.some("impl-1.out"))
    expect(Artifacts.latestOutput([entry("impl-1.out", 0), entry("impl-1.err", 7)])).toEqual(Option.some("impl-1.err"))
    expect(Artifacts.latestOutput([entry("impl-1.prompt.md", 40)])).toEqual(Option.none())
  })

  it.scoped("lists regular files oldest first and reads only the end of a long one, never half a character", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const write = (name: string, text: string, age: number) => {
        NodeFs.writeFileSync(NodePath.join(dir, name), text)
        const at = Date.now() / 1000 - age
        NodeFs.utimesSync(NodePath.join(dir, name), at, at)
      }
      write("impl-1.out", "first\n", 30)
      write("impl-2.out", "é".repeat(10_000) + "END", 10)
      NodeFs.mkdirSync(NodePath.join(dir, "impl-3.out"))
      NodeFs.writeFileSync(NodePath.join(dir, "..", `secret-${NodePath.basename(dir)}`), "the owner's key")
      NodeFs.symlinkSync(NodePath.join(dir, "..", `secret-${NodePath.basename(dir)}`), NodePath.join(dir, "impl-4.out"))
      write(".hidden", "x", 5)
      const listed = yield* Artifacts.list(dir)
      expect(listed.map((e) => e.name)).toEqual(["impl-1.out", "impl-2.out"])
      expect(listed[1]!.size).toBe(20_003)

      // 102 bytes from the end land inside a two-byte `é`: the broken half is dropped.
      const tail = Option.getOrThrow(yield* Artifacts.tail(dir, "impl-2.out", 102))
      expect(tail).toEqual({ name: "impl-2.out", text: "é".repeat(49) + "END", truncated: true })
      expect(Option.getOrThrow(yield* Artifacts.tail(dir, "impl-1.out"))).toEqual({ name: "impl-1.out", text: "first\n", truncated: false })
      expect(yield* Artifacts.tail(dir, "impl-9.out")).toEqual(Option.none())

      const directory = yield* Effect.either(Artifacts.read(dir, "impl-3.out"))
      expect(Either.isLeft(directory) && directory.left._tag).toBe("ArtifactUnreadable")
      // A link an agent planted is neither listed nor read.
      const link = yield* Effect.either(Artifacts.read(dir, "impl-4.out"))
      expect(Either.isLeft(link) && link.left._tag).toBe("ArtifactUnreadable")
      const linkTail = yield* Effect.either(Artifacts.tail(dir, "impl-4.out"))
      expect(Either.isLeft(linkTail)).toBe(true)
      // So is a folder of artifacts that is itself a link elsewhere.
      const linked = `${dir}-linked`
      NodeFs.symlinkSync(dir, linked)
      expect(yield* Artifacts.list(linked)).toEqual([])
      expect(Either.isLeft(yield* Effect.either(Artifacts.read(linked, "impl-1.out")))).toBe(true)
      NodeFs.rmSync(linked)
      NodeFs.rmSync(NodePath.join(dir, "..", `secret-${NodePath.basename(dir)}`))
      const bad = yield* Effect.either(Artifacts.read(dir, "../../etc/passwd"))
      expect(Either.isLeft(bad) && bad.left._tag).toBe("InvalidArtifactName")
      expect(yield* Artifacts.list(NodePath.join(dir, "none"))).toEqual([])
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
