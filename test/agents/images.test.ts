/**
 * How a turn's attached images reach each CLI (issue 32.4; measured against
 * the pinned real CLIs in test/compat/images.compat.test.ts): the argv and
 * stdin each adapter plans, the images read and judged before the agent
 * starts, and the prompt's words for a CLI that takes images and one that
 * does not.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { plan, takesImages } from "../../src/agents/Agents.js"
import { withOwnerWords } from "../../src/agents/Prompts.js"
import * as TurnImages from "../../src/agents/TurnImages.js"

const agent = (kind: AgentSpec["kind"]): AgentSpec => ({ id: kind, kind, command: [kind], model: null, args: [], env: {} })

const input = {
  cwd: "/w/r1",
  promptFile: "/a/impl-1.prompt.md",
  prompt: "look at this",
  label: "impl",
  resume: null,
  newSession: null,
  allowWrite: true,
  timeout: Duration.minutes(15),
  questionsDir: "/h/questions"
}

const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
const shot = { path: "/h/runs/R1/images/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png", inline: { mime: "image/png", base64: "iVBORw0K" } }

/** The values that follow `flag` each time it appears. */
const after = (argv: ReadonlyArray<string>, flag: string) => argv.flatMap((a, i) => (a === flag ? [argv[i + 1]] : []))

describe("each CLI is planned its own way of taking an image", () => {
  it("claude: the prompt and the image as one stream-json user message on stdin, new and resumed", () => {
    for (const resume of [null, "0c4e8c4a-0000-4000-8000-000000000001"]) {
      const p = plan(agent("claude"), { ...input, resume, images: [shot] })
      expect(after(p.argv, "--input-format")).toEqual(["stream-json"])
      // The output stays the event stream the page reads live.
      expect(after(p.argv, "--output-format")).toEqual(["stream-json"])
      expect(p.argv).toContain("--verbose")
      expect(p.stdin.endsWith("\n")).toBe(true)
      expect(JSON.parse(p.stdin)).toEqual({
        type: "user",
        message: {
          role: "user",
          content: [
            { type: "text", text: "look at this" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0K" } }
          ]
        }
      })
    }
  })

  it("codex: -i FILE for each image, each followed by a flag (it takes several values), new and resumed", () => {
    const two = [shot, { path: "/h/runs/R1/images/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.jpg" }]
    for (const resume of [null, "01a22b25-4b0c-7e90-994c-04c963654d77"]) {
      const p = plan(agent("codex"), { ...input, resume, images: two })
      expect(after(p.argv, "-i")).toEqual(two.map((i) => i.path))
      const last = p.argv.lastIndexOf("-i")
      expect(p.argv[last + 2]!.startsWith("-")).toBe(true)
      expect(p.stdin).toBe("look at this")
      expect(p.argv.at(-1)).toBe("-")
    }
  })

  it("codex: a path with a comma (which -i splits at) is named from the worktree, and left to the prompt when even that has one", () => {
    const image = "/home/me,work/magi/runs/R1/images/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png"
    const p = plan(agent("codex"), { ...input, cwd: "/home/me,work/magi/worktrees/r1", images: [{ path: image }] })
    expect(after(p.argv, "-i")).toEqual(["../../runs/R1/images/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png"])
    const q = plan(agent("codex"), { ...input, cwd: "/w,t/r1", images: [{ path: image }] })
    expect(q.argv).not.toContain("-i")
  })

  it("opencode: -f FILE for each image, each followed by a flag, the prompt still on stdin", () => {
    const p = plan(agent("opencode"), { ...input, resume: "ses_1", images: [shot] })
    expect(after(p.argv, "-f")).toEqual([shot.path])
    expect(p.argv[p.argv.indexOf("-f") + 2]!.startsWith("-")).toBe(true)
    expect(p.stdin).toBe("look at this")
  })

  it("without images every plan is as before: plain text on stdin, no image flag", () => {
    for (const kind of ["claude", "codex", "opencode"] as const) {
      const p = plan(agent(kind), input)
      expect(p.stdin).toBe("look at this")
      expect(p.argv).not.toContain("--input-format")
      expect(p.argv).not.toContain("-i")
      expect(p.argv).not.toContain("-f")
    }
  })

  it("claude, codex and opencode take images; a command agent is told their paths instead", () => {
    expect((["claude", "codex", "opencode", "command", "agy"] as const).map((k) => takesImages(agent(k)))).toEqual([true, true, true, false, false])
    const word = { n: 1, at: "2026-12-04T20:00:00Z", text: "the button is cut off", images: ["/h/runs/R1/images/a.png"] }
    expect(withOwnerWords("go", [word])).toContain("Attached image (open each file to see it):\n- /h/runs/R1/images/a.png")
    expect(withOwnerWords("go", [word], { imagesGiven: true })).toContain(
      "Attached image (given to you with this message; each is also this file):\n- /h/runs/R1/images/a.png"
    )
  })
})

describe("a turn's images are read and judged before the agent starts", () => {
  const prepare = (way: TurnImages.ImageWay, paths: ReadonlyArray<string>) =>
    TurnImages.prepare(way, paths).pipe(Effect.either, Effect.provide(NodeContext.layer))

  it.effect("a PNG: its path for a CLI with a file flag, its bytes too for claude, nothing for a command agent", () =>
    Effect.gen(function* () {
      const dir = tempDirSync()
      const file = NodePath.join(dir, "a.png")
      NodeFs.writeFileSync(file, Buffer.from([...PNG_HEAD, 1, 2, 3]))
      expect(yield* prepare("path", [file])).toEqual(Either.right([{ path: file }]))
      expect(yield* prepare("bytes", [file])).toEqual(
        Either.right([{ path: file, inline: { mime: "image/png", base64: Buffer.from([...PNG_HEAD, 1, 2, 3]).toString("base64") } }])
      )
      expect(yield* prepare(undefined, [file])).toEqual(Either.right([]))
    }))

  it.effect("a missing file, an HTML file renamed, one over the cap: the turn is refused saying which and why", () =>
    Effect.gen(function* () {
      const dir = tempDirSync()
      const html = NodePath.join(dir, "b.png")
      NodeFs.writeFileSync(html, "<html><script>alert(1)</script></html>")
      const big = NodePath.join(dir, "c.png")
      NodeFs.writeFileSync(big, Buffer.concat([Buffer.from(PNG_HEAD), Buffer.alloc(8 * 1024 * 1024)]))
      const cases: ReadonlyArray<readonly [string, RegExp]> = [
        [NodePath.join(dir, "gone.png"), /gone\.png attached to this turn cannot be given to the agent: it cannot be read/],
        [html, /b\.png .*: it is an HTML or other markup file/],
        [big, /c\.png .*: the image is over 8 MiB/]
      ]
      for (const [path, why] of cases) {
        const r = yield* prepare("path", [path])
        expect(Either.isLeft(r) && r.left.message).toMatch(why)
      }
    }))

  it.effect("a turn hands its CLI at most MAX_TURN_IMAGES images; the prompt still names the rest", () =>
    Effect.gen(function* () {
      const dir = tempDirSync()
      const files = Array.from({ length: TurnImages.MAX_TURN_IMAGES + 2 }, (_, i) => {
        const f = NodePath.join(dir, `${i}.png`)
        NodeFs.writeFileSync(f, Buffer.from(PNG_HEAD))
        return f
      })
      const r = yield* prepare("path", files)
      expect(Either.getOrThrow(r).map((i) => i.path)).toEqual(files.slice(0, TurnImages.MAX_TURN_IMAGES))
    }))
})
