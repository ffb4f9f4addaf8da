import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { AuditLog, type AuditEntry, LINE_MAX_BYTES, lineOf, parseLog } from "../../src/approvals/AuditLog.js"
import * as AuditLogModule from "../../src/approvals/AuditLog.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { tempDirSync } from "../support.js"

const entry = (n: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  at: new Date(Date.UTC(2026, 11, 1, 12, 0, 0, n)).toISOString(),
  run: "20261201-120000-ab12",
  seat: `seat-${n}`,
  tool: "Bash",
  digest: "0123456789abcdef",
  decision: n % 2 === 0 ? "allow" : "deny",
  by: "rule",
  rule: "Bash(git status:*)",
  ...over
})

const inHome = (dir: string) =>
  Layer.effect(AuditLog, Effect.map(AuditLogModule.make, AuditLog.make)).pipe(Layer.provide(Layer.merge(MagiHome.at(dir), NodeContext.layer)))

describe("the approvals audit log", () => {
  it.effect("keeps every line whole when many writers append at once", () => {
    const dir = tempDirSync()
    return Effect.gen(function* () {
      const log = yield* AuditLog
      // Each append opens the file on its own, as separate processes do.
      yield* Effect.all(
        Array.from({ length: 400 }, (_, n) => log.append(entry(n, { rule: `Bash(${"x".repeat(n % 900)}:*)` }))),
        { concurrency: "unbounded" }
      )
      const text = NodeFs.readFileSync(NodePath.join(dir, "approvals.jsonl"), "utf8")
      const lines = text.split("\n").filter((l) => l !== "")
      expect(lines).toHaveLength(400)
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
      expect(new Set((yield* log.read).map((e) => e.seat)).size).toBe(400)
    }).pipe(Effect.provide(inHome(dir)))
  })

  it("skips a line a crash cut short, and reads the lines after it", () => {
    const text = lineOf(entry(1)) + lineOf(entry(2)).slice(0, 30) + "\n" + lineOf(entry(3))
    expect(parseLog(text).map((e) => e.seat)).toEqual(["seat-1", "seat-3"])
  })

  it("bounds a line, however long the rule that decided", () => {
    expect(Buffer.byteLength(lineOf(entry(1, { rule: "y".repeat(100_000), tool: "t".repeat(100_000) })))).toBeLessThan(LINE_MAX_BYTES)
  })

  it.effect("reads as empty before anything was decided", () =>
    Effect.gen(function* () {
      expect(yield* Effect.flatMap(AuditLog, (l) => l.read)).toEqual([])
    }).pipe(Effect.provide(inHome(tempDirSync()))))
})
