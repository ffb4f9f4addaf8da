/** The planning chat's web tests: a repository whose config names a scripted interviewer, and a draft that passes review. */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"

const BIN = new URL("../fixtures/chat-bin", import.meta.url).pathname

export const DRAFT = [
  "# Retry failed GETs in the fetcher",
  "",
  "## Context",
  "The fetcher gives up on the first network error; the nightly import fails about once a week because of it.",
  "",
  "## Change",
  "Retry idempotent requests three times with backoff.",
  "",
  "## Completion criteria",
  "- [ ] a GET that fails twice then succeeds returns the body",
  "- [ ] a POST is never retried"
].join("\n")

/**
 * A repository whose config names the scripted interviewer, and the
 * directory its script and call log live in.
 */
export const chatRepo = (script: ReadonlyArray<Record<string, unknown>>) => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  // A real git repository: the page takes the one it was started in for its default only when git says it is one.
  NodeFs.mkdirSync(repo, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: repo, stdio: "pipe" })
  NodeFs.writeFileSync(NodePath.join(dir, "script.json"), JSON.stringify(script))
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[agents.interviewer]\nkind = "claude"\ncommand = ${JSON.stringify(NodePath.join(BIN, "claude"))}\nenv = { CHAT_AGENT_DIR = ${JSON.stringify(dir)} }\n`
  )
  return { dir, repo, setScript: (s: ReadonlyArray<Record<string, unknown>>) => NodeFs.writeFileSync(NodePath.join(dir, "script.json"), JSON.stringify(s)) }
}
