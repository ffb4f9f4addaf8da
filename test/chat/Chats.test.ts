import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents } from "../../src/agents/Agents.js"
import * as C from "../../src/chat/Chat.js"
import { Chats } from "../../src/chat/Chats.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { FileSystem } from "@effect/platform"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { advance, realPause, tempDirSync } from "../support.js"
import { DRAFT } from "../web/chat-support.js"

const BIN = new URL("../fixtures/chat-bin", import.meta.url).pathname

/** A scripted claude-shaped interviewer whose calls land in `dir`. */
const interviewer = (dir: string, id = "claude", command = [NodePath.join(BIN, "claude")]): AgentSpec => ({
  id,
  kind: "claude",
  command,
  model: null,
  args: [],
  env: { CHAT_AGENT_DIR: dir, CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") }
})

interface Step {
  readonly reply?: string
  readonly mode?: "quota" | "fail" | "empty" | "hang"
  readonly gate?: boolean
  readonly forget?: boolean
}

/** A home, a repository, and the agent's script. */
const setup = (script: ReadonlyArray<Step>) => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  // A repository of its own, so config is read from it and not from whatever
  // checkout the temp directory happens to sit in.
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "script.json"), JSON.stringify(script))
  return { dir, repo, home: NodePath.join(dir, "home"), root: NodePath.join(dir, "home", "chats") }
}

interface Call {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  readonly stdin: string
  readonly env: Record<string, string>
}
const callsIn = (dir: string): ReadonlyArray<Call> => {
  const file = NodePath.join(dir, "calls.jsonl")
  return NodeFs.existsSync(file)
    ? NodeFs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Call)
    : []
}
const onDisk = (root: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(root, `${id}.json`), "utf8")) as C.Chat
const bodies = (chat: C.Chat) => chat.turns.map((t) => `${t.who}: ${t.body}`)

const layer = (home: string, agents: ReadonlyArray<AgentSpec>) =>
  Chats.at(NodePath.join(home, "chats")).pipe(
    Layer.provideMerge(Layer.mergeAll(Agents.layer, Rosters.fixed(agents), TaskStore.at(NodePath.join(home, "queue")))),
    Layer.provideMerge(MagiHome.at(home)),
    Layer.provideMerge(NodeContext.layer)
  )

describe("a chat's turns, with a real agent process", () => {
  it.live("opens with the briefing in a fresh read-only session in the repo, then resumes it with only the new words", () => {
    const t = setup([{ reply: "Which fetcher do you mean?" }, { reply: "Got it. Here:\n```task\n" + DRAFT + "\n```" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const started = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      expect(bodies(started)).toEqual(["operator: retry the fetcher", "agent: Which fetcher do you mean?"])
      const said = yield* chats.say(started.id, "the HTTP one, GETs only")
      expect(said.draft).toBe(DRAFT)
      expect(onDisk(t.root, started.id)).toEqual(said)

      const [first, second] = callsIn(t.dir)
      expect(first!.stdin).toContain("You are the planning lead")
      expect(first!.stdin).toContain("retry the fetcher")
      expect(first!.cwd).toBe(NodeFs.realpathSync(t.repo))
      expect(first!.env.MAGI_ALLOW_WRITE).toBe("0")
      expect(first!.argv).toContain("--disallowed-tools")
      const session = first!.argv[first!.argv.indexOf("--session-id") + 1]
      expect(said.seat).toMatchObject({ key: "plan", agent: "claude", turns: 2, session, write: false })
      expect(second!.argv[second!.argv.indexOf("--resume") + 1]).toBe(session)
      expect(second!.stdin).toBe("the HTTP one, GETs only")
      expect(NodeFs.readFileSync(NodePath.join(chats.turnDir(started.id, 2), "plan.prompt.md"), "utf8")).toBe("the HTTP one, GETs only")
      expect(NodeFs.existsSync(NodePath.join(chats.turnDir(started.id, 1), "plan.out"))).toBe(true)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("keeps the last draft when a later reply has none", () => {
    const t = setup([{ reply: "```task\n" + DRAFT + "\n```" }, { reply: "Anything else?" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const later = yield* chats.say(chat.id, "thanks")
      expect(later.draft).toBe(DRAFT)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("sends the whole transcript in a fresh session when the CLI can no longer resume its own", () => {
    const t = setup([{ reply: "Which fetcher?" }, { reply: "x", forget: true }, { reply: "Understood: the HTTP one." }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const lost = yield* Effect.either(chats.say(chat.id, "the HTTP one"))
      expect(Either.isLeft(lost) && lost.left._tag === "ChatTurnFailed").toBe(true)
      const again = yield* chats.say(chat.id, "did you get that?")
      expect(bodies(again).at(-1)).toBe("agent: Understood: the HTTP one.")
      const third = callsIn(t.dir)[2]!
      expect(third.argv).toContain("--session-id")
      expect(third.argv).not.toContain("--resume")
      expect(third.stdin).toContain("cannot resume this conversation")
      expect(third.stdin).toContain("You are the planning lead")
      expect(third.stdin.indexOf("Which fetcher?")).toBeLessThan(third.stdin.indexOf("the HTTP one"))
      expect(third.stdin).toContain("did you get that?")
      expect(third.stdin).not.toContain("magi: ")
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("a command agent, which cannot resume a conversation, gets the briefing and the whole transcript each turn, and the chat's id", () => {
    const t = setup([])
    // The owner's program: records its prompt, its argv and MAGI_CHAT, and replies.
    const script = NodePath.join(t.dir, "agent.cjs")
    NodeFs.writeFileSync(
      script,
      `const fs = require("fs")
const seen = { prompt: fs.readFileSync(process.argv[2], "utf8"), session: process.argv[3], chat: process.env.MAGI_CHAT }
fs.appendFileSync(${JSON.stringify(NodePath.join(t.dir, "seen.jsonl"))}, JSON.stringify(seen) + "\\n")
console.log(process.env.MAGI_TURN === "1" ? "Which fetcher?" : "Understood: the HTTP one.")
`
    )
    const mine: AgentSpec = { id: "mine", kind: "command", command: [process.execPath, script, "{prompt_file}", "{session}"], model: null, args: [], env: {} }
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const again = yield* chats.say(chat.id, "the HTTP one")
      expect(bodies(again).at(-1)).toBe("agent: Understood: the HTTP one.")
      const seen = NodeFs.readFileSync(NodePath.join(t.dir, "seen.jsonl"), "utf8").split("\n").filter(Boolean).map((l) =>
        JSON.parse(l) as { prompt: string; session: string; chat: string }
      )
      expect(seen).toHaveLength(2)
      for (const turn of seen) expect(turn).toMatchObject({ session: chat.id, chat: chat.id })
      const second = seen[1]!.prompt
      expect(second).toContain("You are the planning lead")
      expect(second).toContain("cannot resume this conversation")
      expect(second.indexOf("retry the fetcher")).toBeLessThan(second.indexOf("Which fetcher?"))
      expect(second.indexOf("Which fetcher?")).toBeLessThan(second.indexOf("the HTTP one"))
    }).pipe(Effect.provide(layer(t.home, [mine])))
  })

  const failsWith = (step: Step, expected: string) => {
    const t = setup([step])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const failed = yield* Effect.either(chats.start({ idea: "retry the fetcher", repo: t.repo }))
      if (Either.isRight(failed) || failed.left._tag !== "ChatTurnFailed") throw new Error("expected the turn to fail")
      const chat = onDisk(t.root, failed.left.chat.id)
      expect(chat.turns[0]).toMatchObject({ who: "operator", body: "retry the fetcher" })
      expect(chat.turns[1]!.body).toMatch(/^magi: /)
      expect(chat.turns[1]!.body).toContain(expected)
      expect(chat.turns[1]!.body).toContain("Your message is saved")
      expect(C.unanswered(chat).map((x) => x.body)).toEqual(["retry the fetcher"])
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  }

  it.live("a usage limit becomes a saved note with its reset time", () => failsWith({ mode: "quota" }, "resets: 3pm (UTC)"))
  it.live("an agent that crashes becomes a saved note", () => failsWith({ mode: "fail" }, "failed (exit 3): chat agent: crashed"))
  it.live("an agent that says nothing becomes a saved note", () => failsWith({ mode: "empty" }, "without an answer"))

  it.live("an agent that cannot be started becomes a saved note", () => {
    const t = setup([{ reply: "Which fetcher?" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const failed = yield* Effect.either(chats.start({ idea: "retry the fetcher", repo: t.repo }))
      expect(Either.isLeft(failed)).toBe(true)
      const chat = (yield* chats.list)[0]!
      expect(chat.turns[1]!.body).toMatch(/^magi: the agent could not be started/)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir, "claude", [NodePath.join(t.dir, "no-such-agent")])])))
  })

  it.live("a message sent while a turn runs is on disk at once, and the next turn carries every unseen one", () => {
    const t = setup([{ reply: "Which fetcher?" }, { reply: "Noted the HTTP one.", gate: true }, { reply: "Both noted." }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const turn = yield* Effect.fork(chats.say(chat.id, "the HTTP one"))
      while (callsIn(t.dir).length < 2) yield* realPause(10)
      expect(yield* chats.thinking(chat.id)).toBe(true)
      yield* chats.record(chat.id, "GETs only")
      const queued = yield* Effect.fork(chats.say(chat.id, "and log each retry"))
      while (onDisk(t.root, chat.id).turns.length < 5) yield* realPause(10)
      expect(bodies(onDisk(t.root, chat.id)).slice(-2)).toEqual(["operator: GETs only", "operator: and log each retry"])
      NodeFs.writeFileSync(NodePath.join(t.dir, "gate"), "")
      yield* Fiber.join(turn)
      const done = yield* Fiber.join(queued)
      expect(bodies(done)).toEqual([
        "operator: retry the fetcher",
        "agent: Which fetcher?",
        "operator: the HTTP one",
        "agent: Noted the HTTP one.",
        "operator: GETs only",
        "operator: and log each retry",
        "agent: Both noted."
      ])
      expect(callsIn(t.dir).map((c) => c.stdin).slice(1)).toEqual(["the HTTP one", "GETs only\n\nand log each retry"])
      expect(yield* chats.thinking(chat.id)).toBe(false)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])), Effect.timeout(Duration.seconds(60)))
  })
})

describe("a turn that runs too long", () => {
  it.effect("is stopped after 300 s of virtual time, and the operator's words were on disk before it began", () => {
    const t = setup([{ mode: "hang" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.open({ idea: "retry the fetcher", repo: t.repo })
      expect(bodies(onDisk(t.root, chat.id))).toEqual(["operator: retry the fetcher"])
      const turn = yield* Effect.fork(Effect.either(chats.firstTurn(chat.id)))
      while (callsIn(t.dir).length < 1) yield* realPause(10)
      yield* advance(Duration.seconds(299), Duration.seconds(60))
      expect(onDisk(t.root, chat.id).turns).toHaveLength(1)
      yield* advance(Duration.seconds(10))
      // The agent is stopped with SIGTERM (it exits at once); the rest is real time.
      let result = yield* Fiber.poll(turn)
      for (let i = 0; i < 500 && result._tag === "None"; i++) {
        yield* advance(Duration.seconds(1))
        yield* realPause(10)
        result = yield* Fiber.poll(turn)
      }
      const note = onDisk(t.root, chat.id).turns[1]!.body
      expect(note).toMatch(/^magi: claude did not answer within 300 s/)
      expect(note).toContain("Your message is saved")
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })
})

describe("opening a chat", () => {
  it.live("uses [roles] chatter from the repository's config when no agent is asked for", () => {
    const t = setup([{ reply: "Hi" }])
    NodeFs.writeFileSync(NodePath.join(t.repo, "magi.toml"), '[roles]\nchatter = "slow"\n')
    return Effect.gen(function* () {
      const chats = yield* Chats
      expect((yield* chats.open({ idea: "x", repo: t.repo })).agent).toBe("slow")
      expect((yield* chats.open({ idea: "x", repo: t.repo, agent: "fast" })).agent).toBe("fast")
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir, "fast"), interviewer(t.dir, "slow")])))
  })

  it.live("refuses an empty idea, a repository that is not there, and an unknown agent, writing nothing", () => {
    const t = setup([{ reply: "Hi" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const refusal = (input: Parameters<typeof chats.open>[0]) => Effect.map(Effect.flip(chats.open(input)), (e) => e.message)
      expect(yield* refusal({ idea: "  ", repo: t.repo })).toContain("idea is empty")
      expect(yield* refusal({ idea: "x", repo: NodePath.join(t.dir, "nope") })).toContain("not a directory")
      expect(yield* refusal({ idea: "x", repo: t.repo, agent: "gone" })).toContain("no agent `gone`")
      expect(yield* refusal({ idea: "x", repo: t.repo, from: "20261130-100000-ffff" })).toContain("no chat")
      expect(yield* chats.list).toEqual([])
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("a derived chat's first turn carries the source conversation as background", () => {
    const t = setup([{ reply: "Which fetcher?" }, { reply: "Read it." }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const source = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const derived = yield* chats.start({ idea: "the same for uploads", repo: t.repo, from: source.id.slice(-4) })
      expect(derived.from).toBe(source.id)
      const second = callsIn(t.dir)[1]!.stdin
      expect(second).toContain(`continues an earlier planning conversation (${source.id})`)
      expect(second).toContain("Which fetcher?")
      expect(second.indexOf("Which fetcher?")).toBeLessThan(second.indexOf("the same for uploads"))
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("lists open chats first, newest first; an abandoned chat takes no more words", () => {
    const t = setup([{ reply: "Hi" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const a = yield* chats.open({ idea: "a", repo: t.repo })
      const b = yield* chats.open({ idea: "b", repo: t.repo })
      yield* chats.abandon(b.id)
      expect((yield* chats.list).map((c) => [c.id, c.status])).toEqual([
        [a.id, "open"],
        [b.id, "abandoned"]
      ])
      expect(yield* chats.countOpen).toBe(1)
      expect((yield* Effect.flip(chats.record(b.id, "more"))).message).toContain("is abandoned")
      expect(onDisk(t.root, b.id).turns).toHaveLength(1)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })

  it.live("refuses a file written by a newer magi by name", () => {
    const t = setup([{ reply: "Hi" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.open({ idea: "a", repo: t.repo })
      NodeFs.writeFileSync(NodePath.join(t.root, `${chat.id}.json`), JSON.stringify({ ...chat, schema: 2 }))
      expect((yield* Effect.flip(chats.get(chat.id))).message).toContain("written by a newer magi (schema 2")
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })
})

describe("filing the draft", () => {
  it.live("refuses with every problem until the draft passes review, then queues it once and marks the chat filed", () => {
    const t = setup([{ reply: "```task\nretry it\n```" }, { reply: "Fixed:\n```task\n" + DRAFT + "\n```" }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const tasks = yield* TaskStore
      const chat = yield* chats.open({ idea: "retry the fetcher", repo: t.repo })
      const none = yield* Effect.flip(chats.fileDraft(chat.id))
      expect(none.message).toContain("no task file yet")
      yield* chats.firstTurn(chat.id)
      const bad = yield* Effect.flip(chats.fileDraft(chat.id))
      expect(bad._tag === "ChatRefused" && bad.problems?.map((p) => p.message)).toEqual([
        expect.stringContaining("no completion criteria"),
        expect.stringContaining("under 200 bytes")
      ])
      expect(yield* tasks.list).toEqual([])
      yield* chats.say(chat.id, "add criteria please")
      const { chat: filed, task } = yield* chats.fileDraft(chat.id, 3)
      expect(task).toMatchObject({
        title: "Retry failed GETs in the fetcher",
        instruction: DRAFT,
        repo: t.repo,
        priority: 3,
        source: { kind: "human" },
        status: "queued"
      })
      expect(filed).toMatchObject({ status: "filed", task: task.id })
      expect(onDisk(t.root, chat.id).task).toBe(task.id)
      expect((yield* Effect.flip(chats.fileDraft(chat.id))).message).toContain(`already filed as task ${task.id}`)
      expect(yield* tasks.list).toHaveLength(1)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })
})

describe("the chats store in memory", () => {
  it.effect("keeps the operator's words, lists, and has a revision once a chat exists, without a disk", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory("/src/app/.git", { recursive: true })
      const chats = yield* Chats
      expect(yield* chats.revision).toBe(0)
      const chat = yield* chats.open({ idea: "retry the fetcher", repo: "/src/app" })
      const before = yield* chats.revision
      expect(before).toBeGreaterThan(0)
      yield* chats.record(chat.id, "GETs only")
      const read = yield* chats.get(chat.id.slice(-4))
      expect(bodies(read)).toEqual(["operator: retry the fetcher", "operator: GETs only"])
      expect(C.unanswered(read)).toHaveLength(2)
      expect((yield* chats.list).map((c) => c.id)).toEqual([chat.id])
    }).pipe(
      Effect.provide(
        Chats.at("/home/chats").pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              Layer.succeed(Agents, { call: () => Effect.die("no agent runs in this test") }),
              Rosters.fixed([interviewer("/nowhere")]),
              TaskStore.at("/home/queue")
            )
          ),
          Layer.provideMerge(MemoryFileSystem.layer)
        )
      )
    ))
})

describe("two processes hosting one chat", () => {
  it.live("run its turns one after the other, never resuming the same session at once", () => {
    const t = setup([{ reply: "Which fetcher?" }, { reply: "Noted.", gate: true }, { reply: "Also noted." }])
    const second = layer(t.home, [interviewer(t.dir)])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const other = yield* Effect.provide(Chats, second)
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      const first = yield* Effect.fork(chats.say(chat.id, "the HTTP one"))
      while (callsIn(t.dir).length < 2) yield* realPause(10)
      const meanwhile = yield* Effect.fork(other.say(chat.id, "GETs only"))
      while (onDisk(t.root, chat.id).turns.length < 4) yield* realPause(10)
      // The other process's turn waits on the lock while the first runs.
      yield* realPause(1500)
      expect(callsIn(t.dir)).toHaveLength(2)
      NodeFs.writeFileSync(NodePath.join(t.dir, "gate"), "")
      yield* Fiber.join(first)
      const done = yield* Fiber.join(meanwhile)
      expect(callsIn(t.dir).map((c) => c.stdin).slice(1)).toEqual(["the HTTP one", "GETs only"])
      expect(bodies(done).slice(-2)).toEqual(["operator: GETs only", "agent: Also noted."])
      expect(NodeFs.existsSync(NodePath.join(t.root, `${chat.id}.turn`))).toBe(false)
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])), Effect.timeout(Duration.seconds(60)))
  })
})

describe("a reply too long to keep whole", () => {
  it.live("is cut in the chat, its draft still taken from the whole of it", () => {
    const long = "y".repeat(C.MAX_TURN_CHARS) + "\n```task\n" + DRAFT + "\n```"
    const t = setup([{ reply: long }])
    return Effect.gen(function* () {
      const chats = yield* Chats
      const chat = yield* chats.start({ idea: "retry the fetcher", repo: t.repo })
      expect(chat.draft).toBe(DRAFT)
      expect(chat.turns[1]!.body.length).toBeLessThan(long.length)
      expect(chat.turns[1]!.body).toContain("the whole reply is in")
      expect((yield* Effect.flip(chats.record(chat.id, "z".repeat(C.MAX_TURN_CHARS + 1)))).message).toContain("at most")
    }).pipe(Effect.provide(layer(t.home, [interviewer(t.dir)])))
  })
})
