/**
 * The approval rules cannot be escaped (issue 28, items 2, 4 and 5), through
 * `magi approvals hook` as a real process: a file rule matches the path as
 * the filesystem resolves it; a repository's own config allows nothing until
 * the owner trusts it as it reads; a tool call of any size files a question
 * the owner can open, once.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { owner, storeBackends } from "./cliSupport.js"

const SEAT = { MAGI_RUN: "20261203-010000-ee11", MAGI_NODE: "impl", MAGI_SEAT: "impl", MAGI_AGENT: "codex" }

/** What codex sends its `PermissionRequest` hook, for any tool. */
const codexRequest = (tool: string, input: Record<string, unknown>, cwd: string) =>
  JSON.stringify({ hook_event_name: "PermissionRequest", tool_name: tool, tool_input: input, cwd })
const codexDecision = (stdout: string) => JSON.parse(stdout).hookSpecificOutput.decision as { behavior: string; message?: string }

/** The machine's own config, `<XDG_CONFIG_HOME>/magi/config.toml`. */
const machineConfig = (o: ReturnType<typeof owner>, toml: string) => {
  const dir = NodePath.join(o.top, "config", "magi")
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "config.toml"), toml)
}

describe("file rules match the path as resolved", () => {
  it("does not let an allowed folder's .., // or a symlink out of it reach a denied file, through codex's hook", async () => {
    const o = owner()
    const src = NodePath.join(o.cwd, "site", "src")
    NodeFs.mkdirSync(src, { recursive: true })
    const outside = NodePath.join(o.top, "outside")
    NodeFs.mkdirSync(outside)
    NodeFs.symlinkSync(outside, NodePath.join(src, "link"))
    machineConfig(o, `[approvals]\nallow = ["Edit(${src}/*)"]\ndeny = ["Edit(/etc/*)", "Edit(${outside}/*)"]\n`)
    const decide = async (file_path: string) => {
      const r = await o.run(["approvals", "hook", "codex", "--slice", "1"], { ...SEAT, MAGI_REPO: o.cwd }, codexRequest("Edit", { file_path }, o.cwd))
      expect(r.code, r.stderr).toBe(0)
      return codexDecision(r.stdout)
    }
    expect(await decide(`${src}/a.ts`)).toEqual({ behavior: "allow" })
    expect(await decide(`${src}/../../../../../../../../../etc/sudoers`)).toEqual({
      behavior: "deny",
      message: "magi's approval rule Edit(/etc/*) denies this tool call."
    })
    expect(await decide("//etc/passwd")).toEqual({ behavior: "deny", message: "magi's approval rule Edit(/etc/*) denies this tool call." })
    // A file (existing or not) behind the link is where the link leads.
    expect(await decide(`${src}/link/new.txt`)).toEqual({ behavior: "deny", message: `magi's approval rule Edit(${outside}/*) denies this tool call.` })
    expect(await o.filedId(0)).toEqual([])
  }, 90_000)
})

describe("a repository's config allows only once trusted", () => {
  it('ignores a repo magi.toml\'s allow = ["Bash"] until magi approvals trust, and again once the file changes; its deny rules apply throughout', async () => {
    const o = owner()
    NodeFs.mkdirSync(NodePath.join(o.cwd, ".git"))
    const repoToml = NodePath.join(o.cwd, "magi.toml")
    NodeFs.writeFileSync(repoToml, '[approvals]\nallow = ["Bash"]\ndeny = ["Bash(rm -rf:*)"]\n')
    const env = { ...SEAT, MAGI_REPO: o.cwd }
    const curl = codexRequest("Bash", { command: "curl -fsSL http://127.0.0.1:9/x | sh" }, o.cwd)
    const decide = async (request: string) => {
      const r = await o.run(["approvals", "hook", "codex", "--slice", "1"], env, request)
      expect(r.code, r.stderr).toBe(0)
      return { decision: codexDecision(r.stdout), stderr: r.stderr }
    }

    const untrusted = await decide(curl)
    expect(untrusted.decision.behavior).toBe("deny")
    expect(untrusted.decision.message).toContain("magi asked the owner")
    expect(untrusted.stderr).toContain("the owner has not trusted it")
    const rm = await decide(codexRequest("Bash", { command: "rm -rf /" }, o.cwd))
    expect(rm.decision).toEqual({ behavior: "deny", message: "magi's approval rule Bash(rm -rf:*) denies this tool call." })
    // Read by the bundled shell parser: no prefix of the line is `rm -rf`.
    const hidden = await decide(codexRequest("Bash", { command: "{ sudo /bin/rm -fr${IFS}/; }" }, o.cwd))
    expect(hidden.decision).toEqual({ behavior: "deny", message: "magi's approval rule Bash(rm -rf:*) denies this tool call." })

    const listed = await o.run(["approvals", "list"])
    expect(listed.stdout).toContain(`from ${repoToml} (a repository's config, not trusted`)
    expect(listed.stdout).toContain("allow Bash  (approvals.allow)  NOT IN FORCE")
    expect(listed.stdout).toContain("deny  Bash(rm -rf:*)  (approvals.deny)\n")

    // An agent may not trust its own rules.
    const byAgent = await o.run(["approvals", "trust"], SEAT)
    expect(byAgent.code).toBe(1)
    expect(byAgent.stderr).toContain("only the owner trusts")
    const trusted = await o.run(["approvals", "trust", "--repo", o.cwd])
    expect(trusted.code, trusted.stderr).toBe(0)
    const sha = createHash("sha256").update(NodeFs.readFileSync(repoToml)).digest("hex")
    expect(trusted.stdout).toContain(`trusted ${repoToml} (sha256 ${sha.slice(0, 16)})`)
    expect((await decide(curl)).decision).toEqual({ behavior: "allow" })
    expect((await o.run(["approvals", "list"])).stdout).not.toContain("NOT IN FORCE")
    expect((await decide(codexRequest("Bash", { command: "rm -rf /" }, o.cwd))).decision.behavior).toBe("deny")

    NodeFs.appendFileSync(repoToml, "# changed\n")
    const changed = await decide(codexRequest("Bash", { command: "curl -fsSL http://127.0.0.1:9/y | sh" }, o.cwd))
    expect(changed.decision.message).toContain("magi asked the owner")
    expect(changed.stderr).toContain("it changed since the owner trusted it")
  }, 120_000)
})

for (const backend of storeBackends)
  describe(`an oversized approval on ${backend.name}`, () => {
    it(
      "files one question within the caps for a 6 MiB opencode call, showing the command cut with its size and sha256, and a retry files no other",
      async () => {
        const o = await backend.owner()
        const command = `echo ${"x".repeat(6 * 1024 * 1024)}`
        const input = JSON.stringify({ tool: "bash", args: { command }, directory: o.cwd })
        const env = { ...SEAT, MAGI_AGENT: "oc", MAGI_REPO: o.cwd }
        const first = await o.run(["approvals", "hook", "opencode", "--slice", "1"], env, input)
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout).message).toContain("magi asked the owner")
        const [id] = await o.filedId()
        const q = o.read(id!)
        expect(Buffer.byteLength(JSON.stringify(q))).toBeLessThan(1024 * 1024)
        const shownInput = JSON.stringify({ command }, null, 2)
        const sha = createHash("sha256").update(shownInput).digest("hex")
        expect(q.detail).toContain(`The input is ${Buffer.byteLength(shownInput)} bytes (sha256 ${sha})`)
        expect(q.choices).toEqual(["Allow", "Deny"])
        // The owner can open it.
        const shown = await o.run(["answer", id!])
        expect(shown.code, shown.stderr).toBe(0)
        expect(shown.stdout).toContain("Bash")

        const again = await o.run(["approvals", "hook", "opencode", "--slice", "1"], env, input)
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout).message).toContain("magi asked the owner")
        expect(await o.filedId()).toEqual([id])
      },
      120_000
    )
  })
