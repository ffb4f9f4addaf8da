/**
 * The record store's promises, held by the built `magi` as real processes:
 * hostile files in the home, writers racing over a lock a crash left, and
 * agent input that never ends.
 */
import { describe, expect, it } from "vitest"
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { tempDirSync } from "../support.js"

const MAGI = NodePath.resolve("dist/magi.js")

interface Done {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** One isolated owner with a home and an empty config. */
const owner = () => {
  const top = tempDirSync()
  const home = NodePath.join(top, "home")
  const questionsDir = NodePath.join(home, "questions")
  NodeFs.mkdirSync(questionsDir, { recursive: true })
  const env = { PATH: process.env.PATH ?? "", HOME: top, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(top, "config") }
  const start = (args: ReadonlyArray<string>, stdin: "ignore" | "pipe" = "ignore") => {
    const child = spawn(process.execPath, [MAGI, ...args], { cwd: top, env, stdio: [stdin, "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (c) => (stdout += c))
    child.stderr!.on("data", (c) => (stderr += c))
    const done = new Promise<Done>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })))
    return { child, done }
  }
  const run = (args: ReadonlyArray<string>) => start(args).done
  const put = (q: Q.Question) => NodeFs.writeFileSync(NodePath.join(questionsDir, `${q.id}.json`), Q.encode(q))
  const read = (id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(questionsDir, `${id}.json`), "utf8")) as Q.Question
  return { start, run, put, read, questionsDir, top }
}

const question = (id: string, choices: ReadonlyArray<string>) =>
  Q.make({ id, run: "", node: "ask", seat: "operator", summary: `Pick one (${id})`, detail: "", choices, now: new Date() })

/** Rounds of the process race: each is twenty node processes on a 2-core machine. */
const PROCESS_ROUNDS = 5
const RACERS = 20

describe("the record store, through magi as real processes", () => {
  it("lists, shows and answers with a FIFO, a link to /dev/zero and a 3,000-deep record in the questions folder", { timeout: 120_000 }, async () => {
    const o = owner()
    const good = question("20260101-000001-aaaa", ["yes", "no"])
    o.put(good)
    execFileSync("mkfifo", [NodePath.join(o.questionsDir, "20260101-000002-f1f0.json")])
    NodeFs.symlinkSync("/dev/zero", NodePath.join(o.questionsDir, "20260101-000003-2e70.json"))
    NodeFs.writeFileSync(NodePath.join(o.questionsDir, "20260101-000004-deep.json"), "[".repeat(6000) + "]".repeat(6000))

    const listed = await o.run(["answer", "--list"])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain("Pick one (20260101-000001-aaaa)")
    const oldest = await o.run(["answer"])
    expect(oldest.code).toBe(0)
    const fifo = await o.run(["answer", "20260101-000002-f1f0"])
    expect(fifo.code).toBe(1)
    expect(fifo.stderr).toContain("a FIFO")
    const answered = await o.run(["answer", "--reply", "yes"])
    expect(answered.code).toBe(0)
    expect(o.read(good.id).status).toBe("answered")
  })

  it(`gives exactly one winning \`magi answer --reply\` of ${RACERS} over a crash-left lock, on disk, in every round`, { timeout: 600_000 }, async () => {
    const o = owner()
    const choices = Array.from({ length: RACERS }, (_, k) => `w${k}`)
    let badRounds = 0
    for (let round = 0; round < PROCESS_ROUNDS; round++) {
      const id = `20260101-000000-${round.toString(16).padStart(4, "0")}`
      o.put(question(id, choices))
      const lock = NodePath.join(o.questionsDir, `${id}.lock`)
      NodeFs.writeFileSync(lock, "99999 killed\n")
      const past = new Date(Date.now() - 60_000)
      NodeFs.utimesSync(lock, past, past)
      const racers = await Promise.all(choices.map((c) => o.run(["answer", id, "--reply", c])))
      const winners = racers.flatMap((r, k) => (r.code === 0 ? [k] : []))
      const onDisk = o.read(id)
      const kept = winners.length === 1 && (onDisk.answer as { choice: string } | null)?.choice === `w${winners[0]}`
      const losersTold = racers.every((r) => r.code === 0 || r.stderr.includes("already answered"))
      if (!kept || !losersTold) badRounds++
    }
    expect(badRounds).toBe(0)
    expect(NodeFs.readdirSync(o.questionsDir).filter((n) => n.endsWith(".lock") || n.includes(".break-"))).toEqual([])
  })

  it("refuses a --detail - that never ends at the cap, without reading it all", { timeout: 120_000 }, async () => {
    const o = owner()
    const ask = o.start(["ask", "--summary", "Read this", "--detail", "-", "--timeout", "5"], "pipe")
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    let written = 0
    // An endless producer: it stops only when magi stops reading.
    const pump = () => {
      while (ask.child.stdin!.writable && ask.child.stdin!.write(chunk)) written += chunk.byteLength
    }
    ask.child.stdin!.on("drain", pump)
    ask.child.stdin!.on("error", () => undefined)
    pump()
    const done = await ask.done
    expect(done.code).toBe(1)
    expect(done.stderr).toContain(String(Q.DETAIL_MAX_BYTES))
    expect(written).toBeLessThan(64 * 1024 * 1024)
    expect(NodeFs.readdirSync(o.questionsDir).filter((n) => n.endsWith(".json"))).toEqual([])
  })

  it("refuses --panel /dev/zero, a lone empty --choice and a duplicate choice, and files nothing", { timeout: 120_000 }, async () => {
    const o = owner()
    const panel = await o.run(["ask", "--summary", "See this", "--panel", "/dev/zero", "--timeout", "5"])
    expect(panel.code).toBe(1)
    expect(panel.stderr).toContain("not a regular file")
    const empty = await o.run(["ask", "--summary", "Pick", "--choice", "", "--timeout", "5"])
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain("empty or only spaces")
    const twice = await o.run(["ask", "--summary", "Pick", "--choice", "a", "--choice", "a", "--timeout", "5"])
    expect(twice.code).toBe(1)
    expect(twice.stderr).toContain("offered twice")
    expect(NodeFs.readdirSync(o.questionsDir).filter((n) => n.endsWith(".json"))).toEqual([])
  })
})
