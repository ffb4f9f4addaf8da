/**
 * What an implementing turn leaves uncommitted is committed for it (codex's
 * sandbox cannot write `.git`), with real git in a real repository.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { commitLeftovers, leftoversMessage } from "../../src/runs/TurnCommit.js"
import { tempDirSync } from "../support.js"

/** A repository with one commit; `identity` false leaves it (and the global config) naming nobody. */
const repo = (identity = true) => {
  const dir = NodePath.join(tempDirSync(), "repo")
  NodeFs.mkdirSync(dir)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8", env: isolated }).trim()
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  if (identity) {
    git("config", "user.email", "owner@example.com")
    git("config", "user.name", "Owner")
  }
  return { dir, git }
}

// No global or system git config: the machine's identity must not leak in.
const isolated = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", EMAIL: "" }

const withIsolatedGit = <A, E, R>(e: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { g: process.env.GIT_CONFIG_GLOBAL, s: process.env.GIT_CONFIG_NOSYSTEM, e: process.env.EMAIL }
      process.env.GIT_CONFIG_GLOBAL = "/dev/null"
      process.env.GIT_CONFIG_NOSYSTEM = "1"
      process.env.EMAIL = ""
      return saved
    }),
    () => e,
    (saved) =>
      Effect.sync(() => {
        for (const [k, v] of [["GIT_CONFIG_GLOBAL", saved.g], ["GIT_CONFIG_NOSYSTEM", saved.s], ["EMAIL", saved.e]] as const)
          if (v === undefined) delete process.env[k]
          else process.env[k] = v
      })
  )

describe("committing what a turn left", () => {
  it.effect("changed, new and deleted files are committed on the branch under the agent's summary; ignored files are not", () =>
    Effect.gen(function* () {
      const { dir, git } = repo()
      NodeFs.writeFileSync(NodePath.join(dir, ".gitignore"), "build/\n")
      NodeFs.writeFileSync(NodePath.join(dir, "kept.txt"), "one\n")
      NodeFs.writeFileSync(NodePath.join(dir, "gone.txt"), "old\n")
      git("add", ".")
      git("commit", "-q", "-m", "base")
      NodeFs.writeFileSync(NodePath.join(dir, "kept.txt"), "two\n")
      NodeFs.rmSync(NodePath.join(dir, "gone.txt"))
      NodeFs.mkdirSync(NodePath.join(dir, "src", "deep"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dir, "src", "deep", "cache.ts"), "export {}\n")
      NodeFs.mkdirSync(NodePath.join(dir, "build"))
      NodeFs.writeFileSync(NodePath.join(dir, "build", "out.js"), "x\n")

      const made = yield* commitLeftovers(dir, "Added an SQLite cache.\n\nTests pass.", "seat impl's turn 2")
      expect(Option.isSome(made)).toBe(true)
      expect(git("rev-parse", "HEAD")).toBe(Option.getOrThrow(made))
      expect(git("status", "--porcelain")).toBe("")
      expect(git("log", "-1", "--format=%s")).toBe("Added an SQLite cache.")
      expect(git("log", "-1", "--format=%b")).toContain("Tests pass.")
      expect(git("log", "-1", "--format=%b")).toContain("seat impl's turn 2")
      expect(git("log", "-1", "--format=%an <%ae>")).toBe("Owner <owner@example.com>")
      expect(git("show", "--name-only", "--format=", "HEAD").split("\n").sort()).toEqual(["gone.txt", "kept.txt", "src/deep/cache.ts"])
      expect(NodeFs.existsSync(NodePath.join(dir, "gone.txt"))).toBe(false)
      expect(git("rev-parse", "--abbrev-ref", "HEAD")).toBe("trunk")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a clean worktree gets no commit", () =>
    Effect.gen(function* () {
      const { dir, git } = repo()
      const before = git("rev-parse", "HEAD")
      expect(Option.isNone(yield* commitLeftovers(dir, "Nothing to do.", "seat impl's turn 1"))).toBe(true)
      expect(git("rev-parse", "HEAD")).toBe(before)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a repository that names nobody still gets the commit, signed by magi", () =>
    withIsolatedGit(
      Effect.gen(function* () {
        const { dir, git } = repo(false)
        NodeFs.writeFileSync(NodePath.join(dir, "a.txt"), "a\n")
        yield* commitLeftovers(dir, "", "seat impl's turn 1")
        expect(git("log", "-1", "--format=%an <%ae>|%s")).toBe("magi <magi@localhost>|Work left uncommitted by seat impl's turn 1")
      })
    ).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a failing pre-commit hook does not cost the work", () =>
    Effect.gen(function* () {
      const { dir, git } = repo()
      const hook = NodePath.join(dir, ".git", "hooks", "pre-commit")
      NodeFs.writeFileSync(hook, "#!/bin/sh\nexit 1\n", { mode: 0o755 })
      NodeFs.writeFileSync(NodePath.join(dir, "a.txt"), "a\n")
      yield* commitLeftovers(dir, "Wrote a.", "seat impl's turn 1")
      expect(git("status", "--porcelain")).toBe("")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("the message", () => {
  it("takes the summary's first line as subject, cut to 72 characters, and keeps the rest as body", () => {
    const long = `${"word ".repeat(30).trim()}\nsecond line`
    const m = leftoversMessage(long, "seat impl's turn 3")
    const [subject] = m.split("\n")
    expect(subject!.length).toBeLessThanOrEqual(72)
    expect(subject!.endsWith("…")).toBe(true)
    expect(m).toContain("second line")
    expect(leftoversMessage("  \n", "seat impl's turn 3").split("\n")[0]).toBe("Work left uncommitted by seat impl's turn 3")
  })
})
