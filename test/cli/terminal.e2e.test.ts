/**
 * The terminal as an owner and an agent meet it (issue 11, "The terminal"):
 * the built `magi` as real processes, its output asserted as printed.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import { owner } from "./cliSupport.js"

const short = (id: string) => id.split("-").at(-1)!

describe("magi answer with several questions open", () => {
  it("refuses a --reply without an id, naming every open question, and answers the only one without an id", { timeout: 90_000 }, async () => {
    const o = owner()
    const slice = { MAGI_WAIT_SLICE: "1", MAGI_RUN: "run-7" }
    expect((await o.run(["ask", "--summary", "Deploy now?", "--choice", "yes", "--choice", "no"], slice)).code).toBe(0)
    expect((await o.run(["ask", "--summary", "Which port?"], slice)).code).toBe(0)
    const ids = await o.filedId(2)

    const guessed = await o.run(["answer", "--reply", "yes"])
    expect(guessed.code).toBe(1)
    expect(guessed.stderr).toMatch(/^magi: 2 questions are open; say which one/)
    for (const id of ids) expect(guessed.stderr).toContain(`magi answer ${short(id)}`)
    expect(guessed.stderr).toContain("Deploy now?")
    expect(guessed.stderr).toContain("Which port?")
    // Nothing was decided by the refused guess.
    for (const id of ids) expect(o.read(id).status).toBe("open")

    const deploy = ids.find((id) => o.read(id).summary === "Deploy now?")!
    expect((await o.run(["answer", short(deploy), "--reply", "yes"])).code).toBe(0)
    // One open question left: no id needed.
    const only = await o.run(["answer", "--reply", "8080"])
    expect(only.code).toBe(0)
    expect(only.stdout).toContain("Which port?")
  })
})

describe("the open list", () => {
  it("shows each question's age, run and who is waiting, with times in local time", { timeout: 90_000 }, async () => {
    const o = owner()
    // Asked in a run and handed back `pending`: nobody waits on it now.
    expect((await o.run(["ask", "--summary", "Left alone", "--choice", "a"], { MAGI_WAIT_SLICE: "1", MAGI_RUN: "run-left" })).code).toBe(0)
    const [left] = await o.filedId(1)
    // Its agent still waiting.
    const live = o.start(["ask", "--summary", "Still waiting", "--choice", "b"], { MAGI_RUN: "run-live" })
    const ids = await o.filedId(2)
    const waiting = ids.find((id) => id !== left)!
    await o.until(() => NodeFs.existsSync(`${o.questionsDir}/leases/${waiting}.lease`), "the asker's lease")

    // Kolkata is UTC+05:30 all year: the list must show the clock there, not UTC.
    const listed = await o.run(["answer"], { TZ: "Asia/Kolkata" })
    expect(listed.code).toBe(0)
    const local = (iso: string) => {
      const at = new Date(Date.parse(iso) + (5 * 60 + 30) * 60_000)
      return at.toISOString().slice(0, 16).replace("T", " ")
    }
    const block = (id: string) => listed.stdout.split("\n").findIndex((l) => l.startsWith(short(id)))
    const lines = listed.stdout.split("\n")
    const aboutLeft = lines[block(left!) + 2]!
    const aboutLive = lines[block(waiting) + 2]!
    expect(aboutLeft).toContain(`asked ${local(o.read(left!).asked_at)} (`)
    expect(aboutLeft).toMatch(/\(\d+s ago\)/)
    expect(aboutLeft).toContain("run run-left")
    expect(aboutLeft).toContain("no agent is waiting")
    expect(aboutLive).toContain(`asked ${local(o.read(waiting).asked_at)} (`)
    expect(aboutLive).toContain("run run-live")
    expect(aboutLive).toContain("the agent is waiting")

    expect((await o.run(["answer", short(waiting), "--reply", "b"])).code).toBe(0)
    expect((await live.done).stdout).toBe("b\n")
  })
})

describe("the replied outcome", () => {
  it("hands the agent a --thread command that repeats the question's current choices", { timeout: 60_000 }, async () => {
    const o = owner()
    const ask = o.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis cluster"])
    const [id] = await o.filedId()
    expect((await o.run(["answer", id!, "--say", "what about disk space?"])).code).toBe(0)
    const replied = await ask.done
    expect(replied.code).toBe(0)
    expect(replied.stdout).toContain(`magi ask --thread ${id} --summary "..." --choice SQLite --choice 'Redis cluster'\n`)
    expect(replied.stdout).toContain("a reply without them would turn it into a free-text question")
  })

  it("gives a free-text question's reply command no --choice", { timeout: 60_000 }, async () => {
    const o = owner()
    const ask = o.start(["ask", "--summary", "Name the branch"])
    const [id] = await o.filedId()
    expect((await o.run(["answer", id!, "--say", "any rules?"])).code).toBe(0)
    const replied = await ask.done
    expect(replied.stdout).toContain(`magi ask --thread ${id} --summary "..."\n`)
    expect(replied.stdout).not.toContain("--choice")
  })
})
