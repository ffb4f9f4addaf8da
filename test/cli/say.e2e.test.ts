/**
 * `magi say` (issue 32, item 3) with real processes: a word to a seat whose
 * turn is running waits in the run, can be edited or cancelled, and `magi
 * serve`'s loop gives it to the seat's next turn once the running one ends,
 * saying it is the owner's; the loop killed mid-delivery and started again
 * never gives it a second time.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { MAGI, magi, repoWithAgent, serveDaemon } from "../runSupport.js"

const setup = () => {
  const dir = tempDirSync()
  const slow = NodePath.join(dir, "slow")
  const prompts = NodePath.join(dir, "prompts.log")
  const started = NodePath.join(dir, "started.log")
  // Each turn appends its prompt, then works while `slow` exists.
  const script = `echo turn >> ${started}; cat "$1" >> ${prompts}; echo "=====" >> ${prompts}; while [ -f ${slow} ]; do sleep 0.2; done; echo finished`
  const repo = repoWithAgent(dir, ["sh", "-c", script, "agent", "{prompt_file}"])
  const home = NodePath.join(dir, "home")
  const env = { MAGI_HOME: home }
  const runsDir = NodePath.join(home, "runs")
  const runIds = () => (NodeFs.existsSync(runsDir) ? NodeFs.readdirSync(runsDir).filter((f) => /^\d{8}-/.test(f)) : [])
  const record = (id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(runsDir, id, "run.json"), "utf8"))
  const turns = () => (NodeFs.existsSync(started) ? NodeFs.readFileSync(started, "utf8").split("\n").filter((l) => l === "turn").length : 0)
  const promptsText = () => (NodeFs.existsSync(prompts) ? NodeFs.readFileSync(prompts, "utf8") : "")
  return { dir, slow, repo, home, env, runIds, record, turns, promptsText, magi: (...args: string[]) => magi(repo, env, ...args) }
}

const runInBackground = (t: ReturnType<typeof setup>, ...args: string[]) => {
  const child = spawn(process.execPath, [MAGI, "run", ...args], {
    cwd: t.repo,
    env: { ...process.env, ...t.env, XDG_CONFIG_HOME: NodePath.join(t.dir, "no-config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<number | null>((done) => child.once("exit", done))
  return { exited, kill: () => child.kill("SIGKILL") }
}

describe("magi say", () => {
  it("queues a word behind a running turn, edits and cancels, and the loop gives it to the next turn once, as the owner's", { timeout: 240_000 }, async () => {
    const t = setup()
    NodeFs.writeFileSync(t.slow, "")
    const running = runInBackground(t, "build the thing")
    let daemon = serveDaemon(t.repo, t.home, t.env, t.dir)
    try {
      await until("the first turn is working", () => t.turns() === 1 && t.runIds().length === 1, 60_000)
      const [id] = t.runIds()
      const short = id!.split("-").at(-1)!

      const said = t.magi("say", short, "please also cover timeouts")
      expect(said.status, said.stderr).toBe(0)
      expect(said.stdout).toBe(`word 1 to seat impl of run ${short}: seat impl's turn is running; it is queued, and given to the seat when that turn ends\n`)
      // Recorded before the command returned.
      expect(t.record(id!).said).toMatchObject([{ n: 1, seat: "impl", text: "please also cover timeouts", state: "queued" }])

      expect(t.magi("say", short, "--edit", "1", "please also cover the timeouts of retries").status).toBe(0)
      expect(t.magi("say", short, "drop everything").status).toBe(0)
      const cancelled = t.magi("say", short, "--cancel", "2")
      expect(cancelled.stdout).toBe(`word 2 to seat impl of run ${short} cancelled\n`)
      expect(t.magi("show", short).stdout).toContain("(queued, edited): please also cover the timeouts of retries")

      // Bad input: an unknown seat, a path for a seat, a run id that is a path.
      const noSeat = t.magi("say", short, "--seat", "../../etc", "hi")
      expect(noSeat.status).toBe(1)
      expect(noSeat.stderr).toBe(`magi: run ${short} has no seat "../../etc" (its seats: impl)\n`)
      const pathId = t.magi("say", "../runs", "hi")
      expect(pathId.status).toBe(1)
      expect(pathId.stderr).toBe(`magi: "../runs" is not a run id (magi runs lists them)\n`)

      // Slow again for the second turn, so the loop can be killed in the middle of it.
      NodeFs.rmSync(t.slow)
      expect(await running.exited).toBe(0)
      NodeFs.writeFileSync(t.slow, "")
      await until("the loop resumed the seat with the word", () => t.turns() === 2, 60_000)
      const second = t.promptsText().split("=====\n")[1]!
      expect(second.startsWith("## The owner's words to you")).toBe(true)
      expect(second).toContain("These are the owner's own words")
      expect(second).toContain("please also cover the timeouts of retries")
      expect(second).not.toContain("drop everything")
      const afterDelivery = t.record(id!)
      expect(afterDelivery.status).toBe("running")
      expect(afterDelivery.said).toMatchObject([{ n: 1, state: "delivered", turn: 2 }, { n: 2, state: "cancelled" }])
      const edit = t.magi("say", short, "--edit", "1", "too late")
      expect(edit.stderr).toBe("magi: word 1 was already given to seat impl in its turn 2; say something new instead\n")

      // The loop dies mid-turn (-9); started again, it does not give the word a second time.
      process.kill(daemon.pid!, "SIGKILL")
      await daemon.stop()
      NodeFs.rmSync(t.slow)
      daemon = serveDaemon(t.repo, t.home, t.env, t.dir)
      await new Promise((done) => setTimeout(done, 8000))
      expect(t.turns()).toBe(2)
      expect(t.promptsText().split("please also cover the timeouts of retries").length).toBe(2)

      // A word to the seat at rest: the loop resumes it at once.
      t.magi("run", "--resume", short, "finish up")
      expect(t.record(id!).status).toBe("done")
      const atRest = t.magi("say", short, "one more thing")
      expect(atRest.stdout).toBe(`word 3 to seat impl of run ${short}: the loop (magi serve, or magi web) resumes seat impl with it now\n`)
      await until("the seat took the word", () => t.record(id!).said?.[2]?.state === "delivered" && t.record(id!).status === "done", 60_000)
      expect(t.promptsText()).toContain("one more thing")
    } finally {
      running.kill()
      await daemon.stop()
    }
  })

  it("refuses a run that is over, saying why", { timeout: 120_000 }, () => {
    const t = setup()
    expect(t.magi("run", "quick").status).toBe(0)
    const [id] = t.runIds()
    const short = id!.split("-").at(-1)!
    const raw = NodePath.join(t.home, "runs", id!, "run.json")
    NodeFs.writeFileSync(raw, JSON.stringify({ ...t.record(id!), status: "merged" }))
    const said = t.magi("say", short, "hello")
    expect(said.status).toBe(1)
    expect(said.stderr).toBe(`magi: run ${short} is merged; it is over, so no seat of it takes words (start a new run with magi run)\n`)
    expect(t.record(id!).said).toBeUndefined()
  })

  it(
    "attaches an image: stored as the run's asset, its path given to the agent in the owner's words; an HTML file renamed is refused",
    { timeout: 180_000 },
    async () => {
      const t = setup()
      expect(t.magi("run", "quick").status).toBe(0)
      const [id] = t.runIds()
      const short = id!.split("-").at(-1)!
      const fake = NodePath.join(t.dir, "page.png")
      NodeFs.writeFileSync(fake, "<!DOCTYPE html><script>alert(1)</script>")
      const refused = t.magi("say", short, "--image", fake, "look")
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain("it is an HTML or other markup file, not an image")
      expect(t.record(id!).said).toBeUndefined()
      const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")
      const shot = NodePath.join(t.dir, "shot.png")
      NodeFs.writeFileSync(shot, png)
      const daemon = serveDaemon(t.repo, t.home, t.env, t.dir)
      try {
        const said = t.magi("say", short, "--image", shot, "the button is cut off")
        expect(said.status, said.stderr).toBe(0)
        await until("the seat took the word", () => t.record(id!).said?.[0]?.state === "delivered", 60_000)
        const [word] = t.record(id!).said
        const path = NodePath.join(t.home, "runs", id!, "images", word.images[0])
        expect(NodeFs.readFileSync(path)).toEqual(png)
        const prompt = t.promptsText().split("=====\n")[1]!
        expect(prompt).toContain("the button is cut off")
        expect(prompt).toContain(`Attached image (open each file to see it):\n- ${path}`)
      } finally {
        await daemon.stop()
      }
    }
  )
})
