/**
 * The built `magi` as real processes, at its edges: hostile agent text on the
 * owner's terminal, a write that fails, a wait stopped by a signal, a broken
 * config at answering time.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { storeBackends } from "./cliSupport.js"
import { sampleRun } from "../runSupport.js"

const ESC = "\x1b"
const BEL = "\x07"
/** The exact reproduction from issue 12: a summary that rewrites itself on a terminal and sets the clipboard. */
const HOSTILE = `Deploy to staging?\r${ESC}[2KRun tests only?${ESC}]52;c;cm0gLXJmIH4=${BEL}`
const SHOWN = "Deploy to staging?\\r\\e[2KRun tests only?\\e]52;c;cm0gLXJmIH4=\\x07"

const hasRawControls = (text: string) => /[\x00-\x08\x0b-\x1f\x7f]/.test(text)

// Each test runs on both backends: the home folder, and a PostgreSQL database of its own.
for (const backend of storeBackends)
  describe(`records in ${backend.name}`, () => {
    describe("agent text on the owner's terminal", () => {
      it("shows control characters in a summary, detail, choices and thread escaped, never raw", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const ask = o.start([
          "ask",
          "--summary",
          HOSTILE,
          "--detail",
          `line one\nline two${ESC}[1A${ESC}[2Kforged`,
          "--choice",
          `Yes${ESC}[31m`,
          "--choice",
          "No\nchoices: fake"
        ])
        const [id] = await o.filedId()
        const said = await o.run(["answer", id!, "--say", "why?"])
        expect(said.code).toBe(0)

        const listed = await o.run(["answer"])
        expect(hasRawControls(listed.stdout)).toBe(false)
        expect(listed.stdout).toContain(SHOWN)
        // A choice cannot forge a line of its own.
        expect(listed.stdout).toContain("Yes\\e[31m | No\\nchoices: fake")

        const shown = await o.run(["answer", id!])
        expect(hasRawControls(shown.stdout.replaceAll("\n", ""))).toBe(false)
        expect(shown.stdout).toContain(SHOWN)
        // The detail keeps its lines, and shows the escapes that would have erased one.
        expect(shown.stdout).toContain("line one\nline two\\e[1A\\e[2Kforged")

        const answered = await o.run(["answer", id!, "--reply", `Yes${ESC}[31m`])
        expect(answered.code).toBe(0)
        expect(hasRawControls(answered.stdout.replaceAll("\n", ""))).toBe(false)
        expect(answered.stdout).toContain(SHOWN)
        await ask.done
      })
    })

    describe("an agent's run summary on the owner's terminal", () => {
      it("is shown escaped by magi runs and magi show", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const id = "20260902-201256-9fb7"
        const run = sampleRun(id, { status: "failed", summary: HOSTILE, reason: `turn failed: ${ESC}]0;pwned${BEL}` })
        // The database's schema is made by the first command that connects.
        await o.run(["answer", "--list"])
        o.plant("runs", id, JSON.stringify(run, null, 2), "run.json")
        const runs = await o.run(["runs"])
        expect(runs.code).toBe(0)
        expect(hasRawControls(runs.stdout.replaceAll("\n", ""))).toBe(false)
        expect(runs.stdout).toContain(SHOWN)
        const shown = await o.run(["show", id])
        expect(shown.code).toBe(0)
        expect(hasRawControls(shown.stdout.replaceAll("\n", ""))).toBe(false)
        expect(shown.stdout).toContain(SHOWN)
        expect(shown.stdout).toContain("turn failed: \\e]0;pwned\\x07")
      })
    })

    describe("magi ask at its edges", () => {
      // A home that is a file stops the home-folder backend from writing; a
      // database does not care (its own failure, an unreachable database, is
      // in postgres.e2e.test.ts).
      if (backend.name === "the home folder")
        it("never says it asked when the question could not be written", { timeout: 60_000 }, async () => {
          const o = await backend.owner()
          // The home is a file: nothing can be written under it.
          NodeFs.writeFileSync(o.home, "not a directory")
          const asked = await o.run(["ask", "--summary", "Which backend?"])
          expect(asked.code).toBe(1)
          expect(asked.stderr).not.toContain("asked ")
          expect(asked.stderr).not.toContain("waiting")
          expect(asked.stdout).toBe("")
        })

      it(
        "stopped by SIGTERM while waiting, says the question stays open with the --wait command, exits 143 and lets go of its lease",
        { timeout: 60_000 },
        async () => {
          const o = await backend.owner()
          const ask = o.start(["ask", "--summary", "Which backend?"])
          const [id] = await o.filedId()
          const lease = NodePath.join(o.questionsDir, "leases", `${id}.lease`)
          await o.until(() => NodeFs.existsSync(lease) && ask.stderr().includes("waiting up to"), "the asker's lease")
          ask.child.kill("SIGTERM")
          const done = await ask.done
          expect(done.code).toBe(143)
          expect(done.stderr).toContain(`stopped by SIGTERM while waiting on question ${id!.split("-").at(-1)}`)
          expect(done.stderr).toContain(`magi ask --wait ${id}`)
          expect(done.stdout).toBe("")
          expect(NodeFs.existsSync(lease)).toBe(false)
          expect(o.read(id!).status).toBe("open")
        }
      )

      it("stopped by SIGINT exits 130 with the same hint", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const ask = o.start(["ask", "--summary", "Which backend?"])
        const [id] = await o.filedId()
        await o.until(() => ask.stderr().includes("waiting up to"), "the wait to start")
        ask.child.kill("SIGINT")
        const done = await ask.done
        expect(done.code).toBe(130)
        expect(done.stderr).toContain(`magi ask --wait ${id}`)
      })

      it("a slice that hands back pending leaves no lease behind", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const done = await o.run(["ask", "--summary", "Which backend?"], { MAGI_WAIT_SLICE: "1", MAGI_RUN: "20260902-201256-9fb7" })
        expect(done.code).toBe(0)
        expect(done.stdout).toContain("magi ask --wait")
        const [id] = await o.filedId()
        expect(NodeFs.existsSync(NodePath.join(o.questionsDir, "leases", `${id}.lease`))).toBe(false)
      })
    })

    describe("magi answer with a broken config", () => {
      it("warns about the config and answers anyway, since answering needs none of it", { timeout: 60_000 }, async () => {
        const o = await backend.owner()
        const ask = o.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis"])
        const [id] = await o.filedId()
        // The working directory is its own repository root (a stray .git higher
        // up, in the temp directory, must not decide where magi.toml is read).
        NodeFs.mkdirSync(NodePath.join(o.cwd, ".git"))
        NodeFs.writeFileSync(NodePath.join(o.cwd, "magi.toml"), "[ask\nanswer_timeout = \n")
        const listed = await o.run(["answer"])
        expect(listed.code).toBe(0)
        expect(listed.stdout).toContain("Which backend?")
        const answered = await o.run(["answer", id!, "--reply", "SQLite"])
        expect(answered.code).toBe(0)
        expect(answered.stderr).toContain("magi: warning: ignoring the config, which answering does not need:")
        expect(answered.stderr).toContain("magi.toml")
        expect(o.read(id!).answer).toEqual({ choice: "SQLite" })
        expect((await ask.done).stdout).toBe("SQLite\n")
      })
    })
  })
