/**
 * The built `magi` as real processes: an agent's `magi ask` in one, the
 * owner's `magi answer` in another, talking only through the files.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { storeBackends } from "./cliSupport.js"

// Each test runs on both backends: the home folder, and a PostgreSQL database of its own.
for (const backend of storeBackends)
  // Real processes on a shared 2-core machine: a generous deadline per test, so load only makes them slower.
  describe(`magi as real processes, records in ${backend.name}`, { timeout: 120_000 }, () => {
    it("delivers an answer given by `magi answer` in another process to the waiting `magi ask`", async () => {
      const o = await backend.owner()
      const ask = o.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis"], {
        MAGI_RUN: "run-1",
        MAGI_SEAT: "impl-A"
      })
      const [id] = await o.filedId()
      expect(o.read(id!)).toMatchObject({ run: "run-1", seat: "impl-A", node: "ask", answer_timeout: 86400, cwd: o.cwd })

      const listed = await o.run(["answer", "--list"])
      expect(listed.stdout).toContain("Which backend?")
      expect(listed.stdout).toContain("SQLite | Redis")

      const answered = await o.run(["answer", "--reply", "SQLite"])
      expect(answered.code).toBe(0)
      expect(answered.stdout).toContain(`answered ${id!.split("-").at(-1)} Which backend?`)

      const done = await ask.done
      expect(done.code).toBe(0)
      expect(done.stdout).toBe("SQLite\n")
      expect(done.stderr).toContain("waiting for the owner")
    })

    it("returns the owner's words on a say, and answers after the agent replies with --thread", async () => {
      const o = await backend.owner()
      const ask = o.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis"])
      const [id] = await o.filedId()
      expect((await o.run(["answer", id!, "--say", "what about disk space?"])).code).toBe(0)
      const replied = await ask.done
      expect(replied.code).toBe(0)
      expect(replied.stdout).toContain("what about disk space?")
      expect(replied.stdout).toContain(`magi ask --thread ${id} --summary "..."`)

      const thread = o.start(["ask", "--thread", id!, "--summary", "SQLite is one file", "--choice", "SQLite", "--json"])
      // The reply lands on the thread before the owner answers.
      for (let i = 0; i < 200 && o.read(id!).thread.length < 2; i++) await new Promise((r) => setTimeout(r, 25))
      expect(o.read(id!).thread.map((t: { who: string }) => t.who)).toEqual(["operator", "agent"])
      const refused = await o.run(["answer", id!, "--reply", "Redis"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("not one of the choices")
      expect((await o.run(["answer", id!, "--reply", "SQLite"])).code).toBe(0)
      const done = await thread.done
      expect(done.code).toBe(0)
      expect(JSON.parse(done.stdout)).toEqual({ outcome: "answered", id, answer: "SQLite" })
    })

    it("ends a slice with the exact --wait hint, and --wait later prints the answer", async () => {
      const o = await backend.owner()
      const first = await o.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], { MAGI_WAIT_SLICE: "1" })
      expect(first.code).toBe(0)
      const [id] = await o.filedId()
      expect(first.stdout).toContain(`magi ask --wait ${id}`)
      expect(o.read(id!).status).toBe("open")

      const resumed = o.start(["ask", "--wait", id!], { MAGI_WAIT_SLICE: "30" })
      await new Promise((r) => setTimeout(r, 300))
      expect((await o.run(["answer", "--reply", "yes"])).code).toBe(0)
      const done = await resumed.done
      expect(done.code).toBe(0)
      expect(done.stdout).toBe("yes\n")
      // Already answered: a further --wait prints it straight away.
      const again = await o.run(["ask", "--wait", id!])
      expect(again.stdout).toBe("yes\n")
    })

    it("a run's seat that ends its turn on pending (MAGI_WAIT=end-turn) is told to end it, with no --wait to run; the question stays open for the waiter", async () => {
      const o = await backend.owner()
      const env = { MAGI_WAIT_SLICE: "1", MAGI_WAIT: "end-turn", MAGI_RUN: "run-1", MAGI_SEAT: "impl" }
      const first = await o.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], env)
      expect(first.code).toBe(0)
      const [id] = await o.filedId()
      expect(first.stdout).toContain("End your turn now: reply with one line saying you are waiting on the owner about it. Do not run `magi ask --wait`")
      expect(first.stdout).not.toContain(`--wait ${id}`)
      expect(o.read(id!)).toMatchObject({ status: "open", run: "run-1", seat: "impl" })
      const json = await o.run(["ask", "--wait", id!, "--json"], env)
      expect(JSON.parse(json.stdout)).toEqual({ outcome: "pending", id, next: "end-turn" })
      // Outside a run nothing could resume the asker: it is told to wait again.
      const outside = await o.run(["ask", "--wait", id!], { ...env, MAGI_RUN: "" })
      expect(outside.stdout).toContain(`magi ask --wait ${id}`)
    })

    it("outside any run, an exited asker holds nothing: the answer is said to be kept for the next --wait, which reads it (issue 20.4)", async () => {
      const o = await backend.owner()
      const first = await o.run(["ask", "--summary", "Outside a run?", "--choice", "yes", "--choice", "no"], { MAGI_WAIT_SLICE: "1" })
      expect(first.code).toBe(0)
      const [id] = await o.filedId()
      expect(o.read(id!).run).toBe("")
      // Before: the lease stayed for its 90 s, and the page and `magi answer` said the agent was waiting.
      expect(NodeFs.existsSync(NodePath.join(o.questionsDir, "leases", `${id}.lease`))).toBe(false)
      const listed = await o.run(["answer"])
      expect(listed.stdout).toContain("no agent is waiting (your words are kept for its next `magi ask --wait`)")
      expect(listed.stdout).not.toContain("the agent is waiting")
      expect((await o.run(["answer", "--reply", "yes"])).code).toBe(0)
      const resumed = await o.run(["ask", "--wait", id!])
      expect(resumed.stdout).toBe("yes\n")
    })

    it("says, when showing a question with a panel, that it has one and where to open it", async () => {
      const o = await backend.owner()
      NodeFs.writeFileSync(NodePath.join(o.cwd, "p.html"), "<h1>Latency before and after</h1>")
      const asked = await o.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--panel", "p.html"], { MAGI_WAIT_SLICE: "1" })
      expect(asked.code).toBe(0)
      const [id] = await o.filedId()
      const shown = await o.run(["answer", id!])
      expect(shown.stdout).toContain(
        `panel: the agent attached a panel; open it on the page: run magi web and go to the address it prints, then #/questions/${id}`
      )
      const linked = await o.run(["answer", id!], { MAGI_WEB_URL: "http://100.64.0.7:7878/" })
      expect(linked.stdout).toContain(`panel: the agent attached a panel; open it at http://100.64.0.7:7878/#/questions/${id}`)
      // A question without one says nothing of panels.
      await o.run(["ask", "--summary", "Plain?", "--choice", "yes"], { MAGI_WAIT_SLICE: "1" })
      const plain = (await o.filedId(2)).find((q) => q !== id)!
      expect((await o.run(["answer", plain])).stdout).not.toContain("panel")
    })

    it("never lets --wait stretch the deadline the question was asked with", async () => {
      const o = await backend.owner()
      const started = Date.now()
      const first = await o.run(["ask", "--summary", "Quick one", "--timeout", "3"], { MAGI_WAIT_SLICE: "1" })
      expect(first.stdout).toContain("magi ask --wait")
      const [id] = await o.filedId()
      // A fresh slice is 30 s, but only what is left of the 3 s deadline is spent.
      const resumed = await o.run(["ask", "--wait", id!], { MAGI_WAIT_SLICE: "30" })
      expect(resumed.code).toBe(1)
      expect(resumed.stderr).toContain("no answer within 3s of asking")
      expect(Date.now() - started).toBeLessThan(15_000)
    })

    it("prints, on a later --wait, what the owner said while nobody waited, then the answer", async () => {
      const o = await backend.owner()
      await o.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], { MAGI_WAIT_SLICE: "1" })
      const [id] = await o.filedId()
      // Nobody is waiting: the owner speaks, then decides.
      expect((await o.run(["answer", id!, "--say", "only after the release notes are done"])).code).toBe(0)
      expect((await o.run(["answer", id!, "--reply", "yes"])).code).toBe(0)
      const resumed = await o.run(["ask", "--wait", id!])
      expect(resumed.code).toBe(0)
      expect(resumed.stdout).toBe(
        "The owner said, before deciding:\n\nonly after the release notes are done\n\nThe owner's answer:\nyes\n"
      )
      expect(o.read(id!)).toMatchObject({ answer_delivered: true, waiter: null })
      // Read once: a further --wait gives the answer alone.
      expect((await o.run(["ask", "--wait", id!])).stdout).toBe("yes\n")
    })

    it("lets exactly one of twenty concurrent `magi answer` processes win", { timeout: 90_000 }, async () => {
      const o = await backend.owner()
      const ask = o.start(["ask", "--summary", "Pick one", "--choice", "a", "--choice", "b", "--json"])
      const [id] = await o.filedId()
      const racers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => o.run(["answer", id!, "--reply", i % 2 === 0 ? "a" : "b"]))
      )
      const winners = racers.filter((r) => r.code === 0)
      expect(winners).toHaveLength(1)
      for (const loser of racers.filter((r) => r.code !== 0)) {
        expect(loser.code).toBe(1)
        expect(loser.stderr).toContain("already answered")
      }
      const q = o.read(id!)
      expect(q.status).toBe("answered")
      const done = await ask.done
      expect(JSON.parse(done.stdout).answer).toBe(q.answer.choice)
      // No lock or temp file is left behind (the leases and the notification
      // records have folders of their own; on PostgreSQL the notification
      // records are rows).
      const ownFolders = o.env.MAGI_STORE_URL === undefined ? ["announced", "leases"] : ["leases"]
      expect(NodeFs.readdirSync(o.questionsDir).filter((n) => !n.endsWith(".json")).sort()).toEqual(ownFolders)
    })

    it("exits 1 with the reason when the deadline passes unanswered", async () => {
      const o = await backend.owner()
      const done = await o.run(["ask", "--summary", "Anyone?", "--timeout", "1"])
      expect(done.code).toBe(1)
      expect(done.stdout).toBe("")
      expect(done.stderr).toContain("no answer within 1s of asking")
      const [id] = await o.filedId()
      expect(o.read(id!).status).toBe("abandoned")
    })

    it("reads the detail from stdin only when told to with --detail -", async () => {
      const o = await backend.owner()
      const ask = o.start(["ask", "--summary", "Read this", "--detail", "-", "--timeout", "1"], {}, "long\nreasoning\n")
      await ask.done
      const [id] = await o.filedId()
      expect(o.read(id!).detail).toContain("long\nreasoning\n")
    })

    it("refuses to continue another run's question, naming both runs", async () => {
      const o = await backend.owner()
      await o.run(["ask", "--summary", "Mine", "--timeout", "3600"], { MAGI_RUN: "run-a", MAGI_WAIT_SLICE: "1" })
      const [id] = await o.filedId()
      const other = await o.run(["ask", "--wait", id!], { MAGI_RUN: "run-b" })
      expect(other.code).toBe(1)
      expect(other.stderr).toContain("run-a")
      expect(other.stderr).toContain("run-b")
    })

    it("exits 2 on a usage mistake and writes nothing", async () => {
      const o = await backend.owner()
      const noSummary = await o.run(["ask", "--choice", "x"])
      expect(noSummary.code).toBe(2)
      expect(noSummary.stderr).toContain("--summary")
      const badFlag = await o.run(["ask", "--summary", "x", "--bogus"])
      expect(badFlag.code).toBe(2)
      expect(NodeFs.existsSync(o.questionsDir)).toBe(false)
    })

    it("says so plainly when there is nothing to answer", async () => {
      const o = await backend.owner()
      const list = await o.run(["answer"])
      expect(list.code).toBe(0)
      expect(list.stdout).toContain("no open questions")
      const reply = await o.run(["answer", "--reply", "yes"])
      expect(reply.code).toBe(1)
      expect(reply.stderr).toContain("no open question to answer")
    })

    it("shows what the notification test ran, and why it failed", async () => {
      const o = await backend.owner()
      const dir = NodePath.join(o.cwd, "..", "config", "magi")
      NodeFs.mkdirSync(dir, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "config.toml"), '[notify]\ncommand = ["sh", "-c", "echo no route to ntfy >&2; exit 4"]\n')
      const done = await o.run(["notify", "--test"])
      expect(done.code).toBe(1)
      expect(done.stderr).toContain("no route to ntfy")
    })
  })
