/**
 * `magi doctor`'s forge lines against the stand-in forge on 127.0.0.1: the
 * token's source (never the token), its scopes as `GET /user` reports them,
 * a fine-grained token's none said so, a refused token, and the push
 * remote's URL against `[forge] api`. The pure wording as a table.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Check, render } from "../../src/doctor/Check.js"
import { forgeChecks, remoteCheck, scopeCheck } from "../../src/doctor/ForgeChecks.js"
import * as StandIn from "../support/forge/StandInForge.js"
import { tempDirSync } from "../support.js"

const TOKEN = "ghp_doctorT0KENvalue987654321"

let top = ""
let repo = ""
let forge: StandIn.StandIn

const sh = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim()

beforeEach(async () => {
  top = tempDirSync()
  const bare = NodePath.join(top, "remote.git")
  repo = NodePath.join(top, "repo")
  sh(top, "init", "-q", "--bare", "-b", "main", bare)
  sh(top, "init", "-q", "-b", "main", repo)
  forge = await StandIn.start({ bare, owner: "octo", name: "app", token: TOKEN })
})

afterEach(async () => {
  await forge.close()
  NodeFs.rmSync(top, { recursive: true, force: true })
})

const configure = (toml: string, remote?: string) => {
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), toml)
  if (remote !== undefined) sh(repo, "remote", "add", "origin", remote)
}
const prConfig = () => `[graph]\nmerge = "pr"\n\n[forge]\napi = "${forge.api}"\n`
const remoteOnStandIn = () => `${forge.api}/octo/app.git`

const fast = (api: string) => ({ api, retryBase: Duration.millis(10), retries: 1, timeout: Duration.seconds(5), maxRateWait: Duration.seconds(1) })
const doctor = (env: Record<string, string | undefined>) =>
  Effect.runPromise(forgeChecks(repo, { PATH: "/nonexistent", ...env }, fast).pipe(Effect.provide(NodeContext.layer)))
const byName = (checks: ReadonlyArray<Check>): Record<string, Check> => Object.fromEntries(checks.map((c) => [c.name, c]))

describe("magi doctor's forge checks", () => {
  it("says nothing for a repository that does not land through pull requests", async () => {
    configure(`[graph]\nmerge = "local"\n`, remoteOnStandIn())
    expect(await doctor({ GH_TOKEN: TOKEN })).toEqual([])
    expect(forge.requests).toEqual([])
  })

  it("names the token's source and login and its scopes, never the token, and the remote on the configured forge", async () => {
    configure(prConfig(), remoteOnStandIn())
    const checks = await doctor({ GITHUB_TOKEN: TOKEN })
    const c = byName(checks)
    expect(c["forge: token"]).toMatchObject({ status: "ok", detail: "from GITHUB_TOKEN, signed in as magi-bot" })
    expect(c["forge: token scopes"]).toMatchObject({ status: "ok", detail: "the token from GITHUB_TOKEN has repo, workflow" })
    expect(c["forge: remote origin"]).toMatchObject({ status: "ok" })
    expect(c["forge: remote origin"]!.detail).toContain("octo/app on 127.0.0.1:")
    expect(forge.requests).toEqual(["GET /user"])
    expect(render(checks)).not.toContain(TOKEN)
  })

  it("says a fine-grained token reports no scopes, and what it needs instead", async () => {
    configure(prConfig(), remoteOnStandIn())
    forge.scopes = ""
    const c = byName(await doctor({ GH_TOKEN: TOKEN }))
    expect(c["forge: token scopes"]!.status).toBe("ok")
    expect(c["forge: token scopes"]!.detail).toContain("reports no scopes (a fine-grained or Actions token)")
    expect(c["forge: token scopes"]!.detail).toContain("Pull requests")
  })

  it("fails a classic token without repo, and one the forge refuses, naming the variable", async () => {
    configure(prConfig(), remoteOnStandIn())
    forge.scopes = "read:user"
    const weak = byName(await doctor({ GH_TOKEN: TOKEN }))
    expect(weak["forge: token scopes"]).toMatchObject({ status: "fail" })
    expect(weak["forge: token scopes"]!.detail).toContain("without repo")
    const refused = await doctor({ GH_TOKEN: "ghp_wrongwrongwrong" })
    const r = byName(refused)
    expect(r["forge: token"]!.status).toBe("fail")
    expect(r["forge: token"]!.detail).toContain("found in GH_TOKEN")
    expect(r["forge: token"]!.detail).toContain("401")
    expect(render(refused)).not.toContain("ghp_wrongwrongwrong")
  })

  it("fails when no token is found anywhere, naming every place looked", async () => {
    configure(prConfig(), remoteOnStandIn())
    const c = byName(await doctor({}))
    expect(c["forge: token"]).toMatchObject({ status: "fail" })
    expect(c["forge: token"]!.detail).toContain("GH_TOKEN, GITHUB_TOKEN, gh auth token")
    expect(forge.requests).toEqual([])
  })

  it("fails a remote on another host than [forge] api serves, and a missing remote", async () => {
    configure(prConfig(), "git@github.com:octo/app.git")
    const c = byName(await doctor({ GH_TOKEN: TOKEN }))
    expect(c["forge: remote origin"]).toMatchObject({ status: "fail" })
    expect(c["forge: remote origin"]!.detail).toContain("is on github.com")
    NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `${prConfig()}`.replace('merge = "pr"', 'merge = "pr"\nremote = "upstream"'))
    const none = byName(await doctor({ GH_TOKEN: TOKEN }))
    expect(none["forge: remote upstream"]).toMatchObject({ status: "fail", detail: "the repository has no remote upstream" })
  })
})

describe("the forge checks' wording", () => {
  it.each(
    [
      [["repo", "workflow"], "ok"],
      [["repo"], "warn"],
      [["read:org"], "fail"],
      [[], "ok"],
      [null, "ok"]
    ] as const
  )("scopes %j are %s", (scopes, status) => {
    expect(scopeCheck("GH_TOKEN", scopes).status).toBe(status)
  })

  it.each(
    [
      ["https://github.com/o/r.git", "https://api.github.com", "ok"],
      ["git@github.com:o/r.git", "https://api.github.com", "ok"],
      ["https://ghe.example/o/r", "https://ghe.example/api/v3", "ok"],
      ["https://github.com/o/r.git", "https://ghe.example/api/v3", "fail"],
      ["/srv/git/r.git", "https://api.github.com", "fail"],
      ["", "https://api.github.com", "fail"]
    ] as const
  )("remote %s against %s is %s", (url, api, status) => {
    expect(remoteCheck("origin", url, api).status).toBe(status)
  })
})
