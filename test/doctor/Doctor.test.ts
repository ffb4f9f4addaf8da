/**
 * `magi doctor` against fake agent CLIs (test/fixtures/bin): the built CLI as
 * a real process, with a home, a repository and a login profile of the
 * test's own, so the machine's own setup never decides the outcome.
 */
import { describe, expect, it } from "vitest"
import { freshDatabaseSync } from "../pgSupport.js"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { FACTS } from "../../src/doctor/AgentFacts.js"
import { render, fail, ok, warn } from "../../src/doctor/Check.js"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { tempDirSync } from "../support.js"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Option } from "effect"
import { Devices } from "../../src/devices/Devices.js"
import * as ConfiguredStore from "../../src/platform/ConfiguredStore.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { phoneKeys } from "../web/push-support.js"

const MAGI = NodePath.resolve("dist/magi.js")
const BIN = NodePath.resolve("test/fixtures/bin")
const MAGI_BIN = NodePath.resolve("dist/bin")

interface Setup {
  /** The `magi.toml` of the repository checked. */
  readonly toml?: string
  /** The login profile of the test's HOME; by default one that finds magi. */
  readonly profile?: string
  readonly env?: Record<string, string>
  readonly args?: ReadonlyArray<string>
  /** A directory a previous call set up, to run doctor again in the same home. */
  readonly top?: string
}

const doctor = (setup: Setup = {}) => {
  const top = setup.top ?? tempDirSync()
  const repo = NodePath.join(top, "repo")
  const home = NodePath.join(top, "magi-home")
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  NodeFs.mkdirSync(home, { mode: 0o700, recursive: true })
  NodeFs.chmodSync(home, 0o700)
  if (setup.toml !== undefined) NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), setup.toml)
  // bash -l reads ~/.bash_profile first; the machine's /etc/profile may reset PATH before it.
  NodeFs.writeFileSync(NodePath.join(top, ".bash_profile"), setup.profile ?? `export PATH="${MAGI_BIN}:${BIN}:$PATH"\n`)
  const r = spawnSync(process.execPath, [MAGI, "doctor", "--repo", repo, ...(setup.args ?? [])], {
    cwd: repo,
    env: { PATH: `${BIN}:${process.env.PATH}`, HOME: top, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(top, "config"), ...setup.env },
    encoding: "utf8",
    timeout: 120_000
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, home, top }
}

const claudeAgent = (env: string) => `[agents.fast]\nkind = "claude"\ncommand = "${BIN}/claude"\nenv = { ${env} }\n`

describe("magi doctor with fake agent CLIs", () => {
  it("passes a working claude: its version, magi's argv accepted, its sessions, magi found in its login shell", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), args: ["--json"] })
    const report = JSON.parse(r.stdout)
    const line = (name: string) => report.checks.find((c: { name: string }) => c.name === name)
    expect(line("agent fast (claude): version")).toMatchObject({ status: "ok", detail: "claude 9.9.9 (fake)" })
    expect(line("agent fast (claude): magi's argv")).toMatchObject({ status: "ok" })
    expect(line("agent fast (claude): magi's argv").detail).toContain("--permission-mode bypassPermissions")
    expect(line("agent fast (claude): root").status).toBe("ok")
    expect(line("agent fast (claude): approvals").detail).toContain("goes to the owner through magi mcp's approve tool")
    expect(line("agent fast (claude): sessions").detail).toContain(NodePath.join(r.top, ".claude", "projects"))
    expect(line("agent fast (claude): magi in its login shell")).toMatchObject({ status: "ok", detail: NodePath.join(MAGI_BIN, "magi") })
    expect(line("config")).toMatchObject({ status: "ok" })
    expect(line("config").detail).toContain("magi.toml")
    expect(report.ok).toBe(true)
    expect(r.code).toBe(0)
  })

  it("says what a repository's runs will verify, and fails a verify key that is wrong", { timeout: 120_000 }, () => {
    const toml = `${claudeAgent('IS_SANDBOX = "1"')}\n[graph]\nreviewers = 1\n\n[verify]\ngate = ["npm test"]\n`
    const line = (r: ReturnType<typeof doctor>) => JSON.parse(r.stdout).checks.find((c: { name: string }) => c.name === "verify")
    expect(line(doctor({ toml, args: ["--json"] }))).toMatchObject({
      status: "ok",
      detail:
        "after a competition: sync to the base, 1 reviewer(s), up to 4 round(s), gate `npm test`; after a solo run: sync to the base, 1 reviewer(s), up to 4 round(s), gate `npm test`"
    })
    expect(line(doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), args: ["--json"] })).detail).toBe(
      "after a competition: sync to the base, 2 reviewer(s), up to 4 round(s), no gate; after a solo run: nothing (ends done)"
    )
    const bad = line(doctor({ toml: `${claudeAgent('IS_SANDBOX = "1"')}\n[graph]\nincomplete_review = "maybe"\n`, args: ["--json"] }))
    expect(bad.status).toBe("fail")
    expect(bad.detail).toContain("`graph.incomplete_review` must be")
  })

  it("fails, saying what to do, when the CLI refuses magi's argv, and exits 1", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1", FAKE_AGENT_MODE = "refuse-argv"') })
    expect(r.code).toBe(1)
    const lines = r.stdout.split("\n")
    const argv = lines.find((l) => l.includes("magi's argv"))!
    expect(argv).toMatch(
      /^FAIL {2}agent fast \(claude\): magi's argv: .*was refused \(exit 1: error: unknown option '-p'\) — this claude version does not take the flags magi passes/
    )
    expect(r.stderr).toContain("1 check failed")
  })

  it("names IS_SANDBOX=1 when claude would be refused as root", { timeout: 120_000 }, () => {
    const agent: AgentSpec = { id: "fast", kind: "claude", command: ["claude"], model: null, args: [], env: {} }
    const argv = ["claude", "-p", "--permission-mode", "bypassPermissions"]
    expect(FACTS.claude.rootProblem(agent, argv, {}, 0)).toContain('set env = { IS_SANDBOX = "1" } under [agents.fast]')
    expect(FACTS.claude.rootProblem({ ...agent, env: { IS_SANDBOX: "1" } }, argv, {}, 0)).toBeUndefined()
    expect(FACTS.claude.rootProblem(agent, argv, { IS_SANDBOX: "1" }, 0)).toBeUndefined()
    expect(FACTS.claude.rootProblem(agent, argv, {}, 1000)).toBeUndefined()
  })

  it("fails when the agent's login shell resets PATH and loses magi, with the line to add", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), profile: "export PATH=/usr/bin:/bin\n" })
    expect(r.code).toBe(1)
    const line = r.stdout.split("\n").find((l) => l.includes("magi in its login shell"))!
    expect(line).toContain("FAIL")
    expect(line).toContain(`export PATH="${MAGI_BIN}:$PATH"`)
  })

  it(
    "passes a working command agent whose login shell would lose magi: magi is found on the PATH magi gives it, which no shell resets",
    { timeout: 120_000 },
    () => {
      const r = doctor({
        toml: `[agents.mine]\nkind = "command"\ncommand = ["${BIN}/command", "{prompt_file}"]\n`,
        profile: "export PATH=/usr/bin:/bin\n",
        args: ["--json"]
      })
      const report = JSON.parse(r.stdout)
      const line = (name: string) => report.checks.find((c: { name: string }) => c.name === name)
      expect(line("agent mine (command): program")).toMatchObject({ status: "ok", detail: `${BIN}/command` })
      expect(line("agent mine (command): magi on its PATH")).toMatchObject({ status: "ok" })
      expect(line("agent mine (command): magi on its PATH").detail).toContain(NodePath.join(MAGI_BIN, "magi"))
      expect(line("agent mine (command): magi in its login shell")).toBeUndefined()
      expect(report.checks.filter((c: { status: string }) => c.status === "fail")).toEqual([])
      expect(r.code).toBe(0)
    }
  )

  it("names the config file it reads when it says to set up notifications, wherever XDG_CONFIG_HOME puts it", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"') })
    const line = r.stdout.split("\n").find((l) => l.includes("no notification is configured"))!
    expect(line).toContain(`in ${NodePath.join(r.top, "config", "magi", "config.toml")}`)
    expect(line).not.toContain("~/.config")
  })

  it("says a program that is not installed is not on PATH", { timeout: 120_000 }, () => {
    const r = doctor({ toml: `[agents.gone]\nkind = "codex"\ncommand = "codex-not-installed"\n` })
    expect(r.code).toBe(1)
    expect(r.stdout).toContain("FAIL  agent gone (codex): program: `codex-not-installed` is not on PATH — install it")
  })

  it("sends a sample notification only with --notify, and reports a failing command's reason", { timeout: 120_000 }, () => {
    const failing = `[notify]\ncommand = ["sh", "-c", "echo webhook said 403 >&2; exit 7"]\n` + claudeAgent('IS_SANDBOX = "1"')
    const quiet = doctor({ toml: failing })
    expect(quiet.stdout).toContain("ok    notifications: test: not sent (pass --notify")
    const sent = doctor({ toml: failing, args: ["--notify"] })
    expect(sent.code).toBe(1)
    expect(sent.stdout).toMatch(/FAIL {2}notifications: test: notification command `sh` exited with status 7: webhook said 403/)
  })

  it("warns after a notification that failed, with when and why, until a later one goes out", { timeout: 120_000 }, () => {
    const first = doctor({ toml: `[notify]\ncommand = ["sh", "-c", "echo webhook said 403 >&2; exit 7"]\n` + claudeAgent('IS_SANDBOX = "1"') })
    expect(first.stdout).not.toContain("the last notification")
    // The same home and repository: `magi notify --test` publishes through the notifier every ask uses.
    const notify = () =>
      spawnSync(process.execPath, [MAGI, "notify", "--test"], {
        cwd: NodePath.join(first.top, "repo"),
        env: { PATH: `${BIN}:${process.env.PATH}`, HOME: first.top, MAGI_HOME: first.home, XDG_CONFIG_HOME: NodePath.join(first.top, "config") },
        encoding: "utf8",
        timeout: 120_000
      })
    expect(notify().status).toBe(1)
    const after = doctor({ top: first.top })
    expect(after.stdout).toMatch(
      /^warn {2}notifications: the last notification, at \d\d:\d\d, failed: notification command `sh` exited with status 7: webhook said 403/m
    )
    // Nothing beside it says the same channel is fine (issue 27.6).
    expect(after.stdout).not.toMatch(/^ok {4}notifications\b/m)
    NodeFs.writeFileSync(NodePath.join(first.top, "repo", "magi.toml"), `[notify]\ncommand = ["true"]\n` + claudeAgent('IS_SANDBOX = "1"'))
    expect(notify().status).toBe(0)
    const fixed = doctor({ top: first.top })
    expect(fixed.stdout).not.toContain("the last notification")
  })

  it("fails on a broken config, naming the file and line", { timeout: 120_000 }, () => {
    const r = doctor({ toml: "[ask\n" })
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^FAIL {2}config: .*magi\.toml:1/m)
  })

  it("warns when the home is readable by other users", { timeout: 120_000 }, () => {
    const top = tempDirSync()
    const home = NodePath.join(top, "open-home")
    NodeFs.mkdirSync(home)
    NodeFs.chmodSync(home, 0o755)
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), env: { MAGI_HOME: home } })
    expect(r.stdout).toContain(`warn  home ${home}: permissions: mode 755: other users can read the questions and answers — chmod 700 ${home}`)
    expect(r.stdout).toMatch(new RegExp(`ok {4}home ${home}: free disk: \\d+ MiB free`))
  })
})

describe("magi doctor and Web Push", () => {
  const https = `[web]\npublic_url = "https://magi.tail1234.ts.net"\n` + claudeAgent('IS_SANDBOX = "1"')

  it("warns when the page offers Web Push but no phone has turned it on, saying where to press", { timeout: 120_000 }, () => {
    const r = doctor({ toml: https })
    expect(r.stdout).toContain(
      'warn  notifications: Web Push: https://magi.tail1234.ts.net offers it, but no phone has turned it on — open https://magi.tail1234.ts.net/#/devices on the phone and press "Notify this phone"'
    )
  })

  it("counts a subscribed phone as a way to be notified, with no ntfy and no command", { timeout: 120_000 }, async () => {
    const home = NodePath.join(tempDirSync(), "home")
    NodeFs.mkdirSync(home, { mode: 0o700 })
    const phone = phoneKeys()
    await Effect.runPromise(
      Effect.flatMap(Devices, (d) => d.subscribe(Option.none(), { endpoint: "https://push.example.net/send/abc", p256dh: phone.p256dh, auth: phone.auth }))
        .pipe(
          Effect.provide(Devices.layer.pipe(Layer.provide(ConfiguredStore.layer), Layer.provide(MagiHome.at(home)), Layer.provide(NodeFileSystem.layer)))
        )
    )
    const r = doctor({ toml: https, env: { MAGI_HOME: home } })
    expect(r.stdout).toContain("ok    notifications: Web Push: 1 phone takes pushes")
    expect(r.stdout).not.toContain("no notification is configured")
  })

  it("says nothing of Web Push where the page is plain http, which browsers refuse it", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"') })
    expect(r.stdout).not.toContain("Web Push")
  })
})

describe("magi doctor and the store", () => {
  it("checks a PostgreSQL store: reachable, schema migrated, round trip; never printing the password", { timeout: 120_000 }, async () => {
    const db = await freshDatabaseSync()
    try {
      const fresh = doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), args: ["--json"], env: { MAGI_STORE_URL: db.url } })
      const line = (report: { checks: Array<{ name: string }> }, name: string) => report.checks.find((c) => c.name === name)
      const before = JSON.parse(fresh.stdout)
      expect(line(before, "store")).toMatchObject({ status: "ok", detail: `PostgreSQL at ${db.url.replace(":magi_test@", ":***@")}` })
      // Never used by magi yet: the next command migrates it.
      expect(line(before, "store: schema")).toMatchObject({ status: "warn" })
      expect(line(before, "store: latency")).toMatchObject({ status: "ok" })
      expect(fresh.stdout).not.toContain(":magi_test@")
      // Any command migrates; then the doctor finds every step applied.
      spawnSync(process.execPath, [MAGI, "answer", "--list"], {
        env: { PATH: process.env.PATH, HOME: fresh.top, MAGI_HOME: fresh.home, MAGI_STORE_URL: db.url }
      })
      const after = JSON.parse(doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), args: ["--json"], env: { MAGI_STORE_URL: db.url } }).stdout)
      expect(line(after, "store: schema")).toMatchObject({ status: "ok" })
    } finally {
      await db.drop()
    }
  })

  it("fails a store it cannot reach, naming it masked and saying what to do", { timeout: 120_000 }, () => {
    const r = doctor({ toml: claudeAgent('IS_SANDBOX = "1"'), env: { MAGI_STORE_URL: "postgres://magi:pa55word@127.0.0.1:9/magi" } })
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/FAIL {2}store: PostgreSQL at postgres:\/\/magi:\*\*\*@127\.0\.0\.1:9\/magi: .*start the database or fix \[store\] url/)
    expect(r.stdout + r.stderr).not.toContain("pa55word")
  })
})

describe("doctor lines", () => {
  it("are one per check, with the fix on the same line", () => {
    expect(render([ok("a", "fine"), warn("b", "meh", "do x"), fail("c", "broken", "do y")])).toBe(
      "ok    a: fine\nwarn  b: meh — do x\nFAIL  c: broken — do y\n"
    )
  })
})
