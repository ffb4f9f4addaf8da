/**
 * The terminal as an owner and an agent meet it (issue 11, "The terminal"):
 * the built `magi` as real processes, its output asserted as printed.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import { spawn, spawnSync } from "node:child_process"
import { MAGI, storeBackends } from "./cliSupport.js"

const short = (id: string) => id.split("-").at(-1)!

// Each test runs on both backends: the home folder, and a PostgreSQL database of its own.
for (const backend of storeBackends)
  describe(`records in ${backend.name}`, () => {
    describe("magi answer with several questions open", () => {
      it("refuses a --reply without an id, naming every open question, and answers the only one without an id", { timeout: 90_000 }, async () => {
        const o = await backend.owner()
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
        const o = await backend.owner()
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
        const o = await backend.owner()
        const ask = o.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis cluster"])
        const [id] = await o.filedId()
        expect((await o.run(["answer", id!, "--say", "what about disk space?"])).code).toBe(0)
        const replied = await ask.done
        expect(replied.code).toBe(0)
        expect(replied.stdout).toContain(`magi ask --thread ${id} --summary "..." --choice SQLite --choice 'Redis cluster'\n`)
        expect(replied.stdout).toContain("a reply without them would turn it into a free-text question")
      })

      it("gives a free-text question's reply command no --choice", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const ask = o.start(["ask", "--summary", "Name the branch"])
        const [id] = await o.filedId()
        expect((await o.run(["answer", id!, "--say", "any rules?"])).code).toBe(0)
        const replied = await ask.done
        expect(replied.stdout).toContain(`magi ask --thread ${id} --summary "..."\n`)
        expect(replied.stdout).not.toContain("--choice")
      })
    })

    describe("magi ask's progress on a terminal", () => {
      it("fits every redraw of its progress line in a narrow terminal", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        // `script` gives magi a terminal, 60 columns wide; the deadline ends the wait after a few redraws.
        const shell = `stty cols 60; exec ${process.execPath} ${MAGI} ask --summary 'Narrow?' --timeout 3`
        const ran = spawnSync("script", ["-qec", shell, "/dev/null"], { env: { ...o.env, TERM: "xterm" }, cwd: o.cwd, encoding: "utf8", timeout: 60_000 })
        const drawn = ran.stdout.split("\r\x1b[2K").slice(1).map((s) => s.split(/[\r\n]/)[0]!)
        const redraws = drawn.filter((s) => /^waiting|^[0-9a-f]{4}: /.test(s))
        expect(redraws.length).toBeGreaterThan(0)
        for (const line of redraws) {
          expect(line.length, JSON.stringify(line)).toBeLessThan(60)
          expect(line).toMatch(/^waiting on [0-9a-f]{4}: \d+s, returns in \d+s, deadline in \d+s$/)
        }
        // A warning said mid-wait (the deadline passing) starts on a cleared line, never after the progress text.
        const warning = drawn.find((s) => s.includes("went unanswered"))
        expect(warning).toMatch(/^magi: warning: question [0-9a-f]{4} went unanswered/)
      })
    })

    describe("with no notification command configured", () => {
      it("magi ask says once, for a new question, that nobody is being notified and what to set", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const first = await o.run(["ask", "--summary", "Anyone there?"], { MAGI_WAIT_SLICE: "1" })
        const said = first.stderr.split("\n").filter((l) => l.includes("nobody is being notified"))
        expect(said).toHaveLength(1)
        expect(said[0]).toMatch(/^magi: nobody is being notified: no notification command is configured\. Set one in .*config\/magi\/config\.toml/)
        const [id] = await o.filedId()
        const again = await o.run(["ask", "--wait", id!], { MAGI_WAIT_SLICE: "1" })
        expect(again.stderr).not.toContain("nobody is being notified")
      })

      it("stays quiet about it once a command is set", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        NodeFs.mkdirSync(`${o.top}/config/magi`, { recursive: true })
        NodeFs.writeFileSync(`${o.top}/config/magi/config.toml`, '[notify]\ncommand = ["true"]\n')
        const asked = await o.run(["ask", "--summary", "Anyone there?"], { MAGI_WAIT_SLICE: "1" })
        expect(asked.code).toBe(0)
        expect(asked.stderr).not.toContain("nobody is being notified")
      })

      it("magi notify --test fails, saying nothing is configured and what to set", async () => {
        const o = await backend.owner()
        const done = await o.run(["notify", "--test"])
        expect(done.code).toBe(1)
        expect(done.stdout).toBe("")
        expect(done.stderr).toMatch(/^magi: nobody is being notified: no notification command is configured\. Set one in /)
        expect(done.stderr).toContain(`${o.top}/config/magi/config.toml`)
        expect(done.stderr).toContain("[notify] ntfy = { topic = ")
      })
    })

    describe("duplicate choices", () => {
      it("are refused on a new question and on a reply, with nothing written", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const fresh = await o.run(["ask", "--summary", "Pick", "--choice", "yes", "--choice", "yes"])
        expect(fresh.code).toBe(1)
        expect(fresh.stderr).toBe("magi: the choice `yes` is offered twice; each --choice must be different\n")
        expect(NodeFs.existsSync(o.questionsDir) ? NodeFs.readdirSync(o.questionsDir).filter((n) => n.endsWith(".json")) : []).toEqual([])

        const ask = o.start(["ask", "--summary", "Pick", "--choice", "yes", "--choice", "no"])
        const [id] = await o.filedId()
        expect((await o.run(["answer", id!, "--say", "why?"])).code).toBe(0)
        await ask.done
        const reply = await o.run(["ask", "--thread", id!, "--summary", "because", "--choice", "no", "--choice", "no"])
        expect(reply.code).toBe(1)
        expect(reply.stderr).toContain("the choice `no` is offered twice")
        expect(o.read(id!).thread).toHaveLength(1)
        expect(o.read(id!).choices).toEqual(["yes", "no"])
      })
    })

    describe("Ctrl-C on a terminal", () => {
      it("stops the wait with the --wait hint on a line of its own, exit 130, the question still open", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const shell = `stty cols 80; exec ${process.execPath} ${MAGI} ask --summary 'Interrupt me' --choice a`
        const child = spawn("script", ["-qec", shell, "/dev/null"], { env: { ...o.env, TERM: "xterm" }, cwd: o.cwd, stdio: ["pipe", "pipe", "pipe"] })
        let out = ""
        child.stdout.on("data", (c) => (out += c))
        const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
        await o.until(() => out.includes("waiting on") || out.includes("waiting for the owner on"), "the progress line")
        // ^C typed at the terminal: the line discipline turns it into SIGINT for magi.
        child.stdin.write("\x03")
        expect(await closed).toBe(130)
        const [id] = await o.filedId()
        expect(out).toContain(`\r\x1b[2K\r\nmagi: stopped by SIGINT while waiting on question ${short(id!)}; the question stays open`)
        expect(out).toContain(`To keep waiting in the foreground: magi ask --wait ${id}`)
        expect(o.read(id!).status).toBe("open")
      })
    })
  })
