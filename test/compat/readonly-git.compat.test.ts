/**
 * A read-only seat (a judge, a reviewer) may read history on every CLI
 * (issue 29): on the pinned real claude, codex and opencode, a seat run with
 * `allowWrite: false` in a detached worktree, as a judge is, runs `git log`,
 * `git show` and `git diff` through its own shell tool and reads the
 * candidate's branch, while a commit, `--output` and a redirect are refused
 * by the CLI's own sandbox or permissions and leave nothing behind.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, newSeat } from "../../src/agents/Agents.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { type Move, seenAnthropic, seenChat, seenResponses } from "./standins/acting.js"
import { claudeEnv, startAnthropic } from "./standins/anthropic.js"
import { startOpenAiChat } from "./standins/openai-chat.js"
import { codexConfig, startResponsesStandIn } from "./standins/openai-responses.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"
import { afterTest, need, scratchDir } from "./processes.js"

/** A generous bound for one real turn of six tool calls on a loaded 2-core machine. */
const TURN_MS = 150_000

const BRANCH = "magi/ro1/A"

const READS = [`git log --oneline ${BRANCH}`, `git show ${BRANCH}`, `git diff trunk ${BRANCH}`]
const WRITES = ["git commit -q --allow-empty -m sneaky", `git diff --output=out.txt trunk ${BRANCH}`, `git log ${BRANCH} > log.txt`]

/** Each command in turn, by the number of tool results this turn has seen, then a closing line. */
const script = (results: number): Move => {
  const cmd = [...READS, ...WRITES][results]
  return cmd === undefined ? { text: "Read it; changed nothing." } : { shell: cmd }
}

/** A repository with a candidate's branch, and a judge's detached worktree at the base. */
const repoWithCandidate = (dir: string) => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: "pipe" }).trim()
  git("init", "-q", "-b", "trunk")
  git("config", "user.email", "owner@example.com")
  git("config", "user.name", "Owner")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "# scratch\n")
  git("add", "-A")
  git("commit", "-q", "-m", "init")
  git("checkout", "-q", "-b", BRANCH)
  NodeFs.writeFileSync(NodePath.join(repo, "feature.txt"), "hello from candidate A\n")
  git("add", "-A")
  git("commit", "-q", "-m", "Add the feature file")
  git("checkout", "-q", "trunk")
  const judge = NodePath.join(dir, "judge")
  git("worktree", "add", "-q", "--detach", judge, "trunk")
  return { repo, judge, git }
}

interface Seat {
  readonly agent: AgentSpec
  /** The outputs of the tool calls, in order, as the CLI sent them back to its model. */
  readonly results: () => ReadonlyArray<string>
}

const claudeSeat = async (dir: string): Promise<Seat> => {
  const api = await startAnthropic((body) => {
    const m = script(seenAnthropic(body).seen.results.length)
    return "shell" in m ? { tool: "Bash", input: { command: m.shell, description: "run a command" } } : m
  })
  afterTest(() => api.close())
  const home = NodePath.join(dir, "claude-home")
  NodeFs.mkdirSync(home)
  return {
    agent: { id: "claude", kind: "claude", command: [need("claude")], model: null, args: [], env: claudeEnv(api.url, home) },
    results: () => seenAnthropic(api.turns().at(-1)!.body!).seen.results
  }
}

const codexSeat = async (dir: string): Promise<Seat> => {
  const s = await startResponsesStandIn((r) => {
    const m = script(seenResponses(r).seen.results.length)
    return "shell" in m ? { kind: "call", name: "exec_command", args: { cmd: m.shell, yield_time_ms: 60_000 } } : { kind: "message", text: m.text }
  })
  afterTest(() => s.close())
  const codexHome = NodePath.join(dir, "codex-home")
  NodeFs.mkdirSync(codexHome)
  NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(s))
  return {
    agent: { id: "codex", kind: "codex", command: [need("codex")], model: null, args: [], env: { ...s.proxyEnv, CODEX_HOME: codexHome } },
    results: () => seenResponses(s.requests.at(-1)!).seen.results
  }
}

const opencodeSeat = async (dir: string): Promise<Seat> => {
  const s = await startOpenAiChat((r) => {
    const m = script(seenChat(r).seen.results.length)
    return "shell" in m ? { tool: "bash", args: { command: m.shell, description: "run a command" } } : m
  })
  afterTest(() => s.close())
  return {
    agent: { id: "opencode", kind: "opencode", command: [need("opencode")], model: MODEL, args: [], env: opencodeEnv(dir, "oc", s.baseUrl) },
    results: () => seenChat(s.requests.filter((r) => (r.tools?.length ?? 0) > 0).at(-1)!).seen.results
  }
}

const readOnlyCall = (home: string, agent: AgentSpec, cwd: string, artifactsDir: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* (yield* Agents).call({
        agent,
        seat: newSeat("judge-1", agent.id),
        prompt: `Read the candidate on ${BRANCH} with git; change nothing.`,
        cwd,
        allowWrite: false,
        timeout: Duration.millis(TURN_MS),
        artifactsDir,
        stem: "judge-1-1",
        run: "20260101-000000-ro01",
        node: "judge"
      })
    }).pipe(Effect.provide(Agents.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provideMerge(NodeContext.layer))))
  )

/** How each CLI words the refusal of a write: its permission rule, or its sandbox's read-only file system. */
const REFUSED: Record<string, RegExp> = {
  claude: /denied|permission|requires approval/i,
  codex: /Read-only file system|Operation not permitted|Permission denied|unable to/i,
  opencode: /a rule which prevents you from using this specific tool call/
}

describe("a read-only seat reads history, and writes nothing, for real", () => {
  for (const [cli, seat] of [["claude", claudeSeat], ["codex", codexSeat], ["opencode", opencodeSeat]] as const) {
    it(`${cli}: git log, git show and git diff run; a commit, --output and a redirect are refused`, async () => {
      const dir = scratchDir(`ro-${cli}-`)
      const { judge, git } = repoWithCandidate(dir)
      const before = git("for-each-ref", "--format=%(refname) %(objectname)")
      const s = await seat(dir)
      const r = await readOnlyCall(NodePath.join(dir, "magi-home"), s.agent, judge, NodePath.join(dir, "artifacts"))
      expect(r.text, r.text).toBe("Read it; changed nothing.")
      const results = s.results()
      expect(results, JSON.stringify(results)).toHaveLength(READS.length + WRITES.length)
      const [log, show, diff, ...writes] = results
      expect(log).toContain("Add the feature file")
      expect(show).toContain("+hello from candidate A")
      expect(diff).toContain("+hello from candidate A")
      for (const w of writes) expect(w).toMatch(REFUSED[cli]!)
      // Nothing written: no new ref or commit, no file in the judge's worktree.
      expect(git("for-each-ref", "--format=%(refname) %(objectname)")).toBe(before)
      expect(NodeFs.readdirSync(judge).sort()).toEqual([".git", "README.md"])
    }, TURN_MS + 30_000)
  }
})
