/**
 * The run's page shows what the run did as `magi show` does (issue 27.16):
 * its commits and diffstat off the base, read from a real repository, on a
 * phone-sized Chromium against the built `magi web`. Git's text is the
 * agent's: it is shown as text, never parsed as HTML.
 */
import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { seedRun, startWeb } from "./web-support.js"
import { phoneSession } from "./browser-support.js"

const SUBJECT = `Add the cache <img src=x onerror="document.title='owned'">`

/** A repository with `main`, and a run branch two commits ahead of it. */
const repoWithRunBranch = (dir: string, branch: string) => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: "pipe" }).trim()
  git("init", "-q", "-b", "main")
  git("config", "user.email", "t@example.invalid")
  git("config", "user.name", "t")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\n")
  git("add", ".")
  git("commit", "-qm", "base")
  const base = git("rev-parse", "HEAD")
  git("checkout", "-qb", branch)
  NodeFs.writeFileSync(NodePath.join(repo, "cache.ts"), "export const cache = new Map()\n".repeat(3))
  git("add", ".")
  git("commit", "-qm", SUBJECT)
  NodeFs.appendFileSync(NodePath.join(repo, "README.md"), "cached\n")
  git("commit", "-qam", "Document the cache")
  git("checkout", "-q", "main")
  return { repo, base }
}

describe("the run's page", () => {
  const session = phoneSession()

  it("shows the run's commits and diffstat as magi show does, as text", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const id = "20260904-101500-6c6c"
    const branch = "magi/6c6c"
    const { base, repo } = repoWithRunBranch(tempDirSync(), branch)
    seedRun(home, sampleRun(id, { status: "done", repo, branch, base_commit: base, summary: "cached" }))
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${id}`)
      const changes = page.locator(".run-detail .changes")
      await changes.waitFor({ timeout: 10_000 })
      expect(await changes.innerText()).toContain(`2 commits on ${branch}:`)
      const commits = await changes.locator(".commits").innerText()
      expect(commits).toMatch(/^[0-9a-f]{7,} Document the cache\n[0-9a-f]{7,} Add the cache <img src=x onerror="document.title='owned'">$/)
      const stat = await changes.locator(".diffstat").innerText()
      expect(stat).toMatch(/README\.md\s+\|\s+1 \+/)
      expect(stat).toMatch(/cache\.ts\s+\|\s+3 \+\+\+/)
      expect(stat).toContain("2 files changed, 4 insertions(+)")
      expect(await page.locator(".run-detail img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")
    } finally {
      await session.close()
    }
  })
})
