import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { riskyAllow } from "../../src/approvals/RiskyRules.js"
import * as Rules from "../../src/approvals/Rules.js"
import * as TrustedConfigs from "../../src/approvals/TrustedConfigs.js"
import { approvalChecks } from "../../src/doctor/ApprovalChecks.js"
import { MagiHome } from "../../src/platform/MagiHome.js"

const rule = (text: string) => {
  const r = Rules.parseRule(text)
  if (Rules.isBadRule(r)) throw new Error(r.why)
  return r
}

describe("allow rules that let more through than they read", () => {
  it.each([
    ["Bash(git log:*)", "--output=FILE"],
    ["Bash(npm test:*)", "--script-shell"],
    ["Bash(find:*)", "-exec"],
    ["Bash(/usr/bin/sed *)", "-i"],
    ["Bash", "every shell command"],
    ["Bash(*:*)", "its program is a pattern"]
  ])("%s is flagged, saying %s", (text, said) => {
    expect(riskyAllow(rule(text))).toContain(said)
  })

  it.each(["Bash(git status)", "Bash(ls:*)", "Read", "Edit(/work/*)", "mcp__github__*"])("%s is not", (text) => {
    expect(riskyAllow(rule(text))).toBeUndefined()
  })
})

describe("magi doctor's approval lines", () => {
  it.effect("list each file's rules with where they are written, mark an untrusted repository's allow rules not in force, and flag a risky allow", () =>
    Effect.gen(function* () {
      const top = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-doctor-approvals-"))
      const repo = NodePath.join(top, "repo")
      NodeFs.mkdirSync(NodePath.join(top, "config", "magi"), { recursive: true })
      NodeFs.mkdirSync(repo)
      NodeFs.writeFileSync(NodePath.join(top, "config", "magi", "config.toml"), '[approvals]\nallow = ["Bash(git log:*)"]\n')
      const repoToml = NodePath.join(repo, "magi.toml")
      NodeFs.writeFileSync(repoToml, '[approvals]\nallow = ["Bash"]\ndeny = ["Bash(rm -rf:*)"]\n')
      const layer = Layer.merge(NodeFileSystem.layer, MagiHome.at(NodePath.join(top, "home")))
      const provider = ConfigProvider.fromMap(new Map([["XDG_CONFIG_HOME", NodePath.join(top, "config")], ["HOME", top]]))
      const run = approvalChecks(repo).pipe(Effect.withConfigProvider(provider), Effect.provide(layer))

      const before = yield* run
      const machine = before.find((c) => c.name === `approvals: ${NodePath.join(top, "config", "magi", "config.toml")}`)
      expect(machine?.status).toBe("ok")
      expect(machine?.detail).toContain("allow Bash(git log:*) (approvals.allow)")
      const repoLine = before.find((c) => c.name === `approvals: ${repoToml}`)
      expect(repoLine?.status).toBe("warn")
      expect(repoLine?.detail).toContain("not trusted")
      expect(repoLine?.detail).toContain("allow Bash (approvals.allow) NOT IN FORCE")
      expect(repoLine?.detail).toContain("deny Bash(rm -rf:*) (approvals.deny)")
      expect(before.find((c) => c.name === "approvals: allow Bash(git log:*)")?.detail).toContain("--output=FILE")
      expect(before.some((c) => c.name === "approvals: allow Bash")).toBe(false)

      yield* TrustedConfigs.trust(repoToml, NodeFs.readFileSync(repoToml, "utf8"), new Date()).pipe(Effect.provide(layer))
      const after = yield* run
      expect(after.find((c) => c.name === `approvals: ${repoToml}`)?.status).toBe("ok")
      expect(after.find((c) => c.name === "approvals: allow Bash")?.detail).toContain("every shell command")
    }))
})
