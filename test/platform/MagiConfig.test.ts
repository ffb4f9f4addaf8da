import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { defaultHostName, defaultMaxTurns, load, settingsOf } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { tempDirSync } from "../support.js"

/** A user config dir and a git repo with a nested working directory. */
const world = (files: Record<string, string>, env: Record<string, string> = {}) => {
  const top = tempDirSync()
  const configHome = NodePath.join(top, "config")
  const repo = NodePath.join(top, "repo")
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(repo, "src", "deep"), { recursive: true })
  for (const [name, body] of Object.entries(files)) {
    const path = name.startsWith("user:") ? NodePath.join(configHome, "magi", name.slice(5)) : NodePath.join(repo, name)
    NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
    NodeFs.writeFileSync(path, body)
  }
  const provider = ConfigProvider.fromMap(new Map(Object.entries({ XDG_CONFIG_HOME: configHome, HOME: top, ...env })))
  return {
    repo,
    configHome,
    run: <A, E>(effect: Effect.Effect<A, E, import("@effect/platform").FileSystem.FileSystem>) =>
      effect.pipe(Effect.provide(Layer.merge(NodeContext.layer, Layer.setConfigProvider(provider))))
  }
}

describe("MagiConfig", () => {
  it.effect("uses the defaults when no file exists", () => {
    const w = world({})
    return w.run(load(NodePath.join(w.repo, "src"))).pipe(
      Effect.map((s) => {
        expect(s.answerTimeoutSecs).toBe(86_400)
        expect(s.waitSliceSecs).toBe(240)
        expect(s.notifyCommand).toEqual([])
      })
    )
  })

  it.effect("lets the repo's magi.toml override .magi/config.toml, which overrides the user's file", () => {
    const w = world({
      "user:config.toml": '[ask]\nanswer_timeout = 100\nwait_slice = 50\n[notify]\ncommand = ["ntfy", "{summary}"]\n',
      ".magi/config.toml": "[ask]\nanswer_timeout = 200\n",
      "magi.toml": "[ask]\nwait_slice = 30\n"
    })
    return w.run(load(NodePath.join(w.repo, "src", "deep"))).pipe(
      Effect.map((s) => {
        expect(s.answerTimeoutSecs).toBe(200)
        expect(s.waitSliceSecs).toBe(30)
        expect(s.notifyCommand).toEqual(["ntfy", "{summary}"])
        expect(s.files).toHaveLength(3)
      })
    )
  })

  it.effect("keeps [approvals] ask on when the machine's config sets it, whatever a repository's config says", () => {
    const w = world({ "user:config.toml": "[approvals]\nask = true\n", "magi.toml": "[approvals]\nask = false\n" })
    return w.run(load(w.repo)).pipe(Effect.map((s) => expect(s.approvals.ask).toBe(true)))
  })

  it.effect("refuses an array set in two files, naming both", () => {
    const w = world({
      "user:config.toml": '[notify]\ncommand = ["ntfy"]\n',
      "magi.toml": '[notify]\ncommand = ["curl"]\n'
    })
    return w.run(Effect.flip(load(w.repo))).pipe(
      Effect.map((e) => {
        expect(e.message).toContain("notify.command")
        expect(e.message).toContain(NodePath.join(w.configHome, "magi", "config.toml"))
        expect(e.message).toContain(NodePath.join(w.repo, "magi.toml"))
      })
    )
  })

  it.effect("adds up approval rules set in the machine's config and the repository's, rather than refusing to load", () => {
    const w = world({
      "user:config.toml": '[approvals]\ndeny = ["Bash(rm -rf *)"]\n',
      "magi.toml": '[approvals]\ndeny = ["Bash(git push *)"]\n'
    })
    return w.run(load(w.repo)).pipe(Effect.map((s) => expect(s.approvals.deny).toEqual(["Bash(rm -rf *)", "Bash(git push *)"])))
  })

  it.effect("names the file and line of a malformed config", () => {
    const w = world({ "magi.toml": "[ask]\nanswer_timeout = 10\nwait_slice = = 3\n" })
    return w.run(Effect.flip(load(w.repo))).pipe(
      Effect.map((e) => expect(e.message).toContain(`${NodePath.join(w.repo, "magi.toml")}:3`))
    )
  })

  it.effect("refuses a notification command written as a shell line", () => {
    const w = world({ "magi.toml": '[notify]\ncommand = "ntfy publish {summary}"\n' })
    return w.run(Effect.flip(load(w.repo))).pipe(Effect.map((e) => expect(e.message).toContain("array of strings")))
  })

  it.effect("reads the loop's [daemon] and [roles] keys, with one run at a time, two attempts and the roster's first agent by default", () =>
    Effect.gen(function* () {
      const none = world({})
      expect(yield* none.run(load(none.repo))).toMatchObject({ maxConcurrentRuns: 1, maxAttempts: 2, implementer: null })
      const set = world({ "magi.toml": '[daemon]\nmax_concurrent_runs = 3\nmax_attempts = 4\n[roles]\nimplementer = "fast"\n' })
      expect(yield* set.run(load(set.repo))).toMatchObject({ maxConcurrentRuns: 3, maxAttempts: 4, implementer: "fast" })
    }))

  it.effect("reads [host] and [repos]: the machine's hostname and a capacity from its cores and memory by default", () =>
    Effect.gen(function* () {
      const none = world({})
      expect(yield* none.run(load(none.repo))).toMatchObject({ hostName: defaultHostName(), maxTurns: defaultMaxTurns(), repos: {} })
      const set = world({ "user:config.toml": '[host]\nname = "buildbox"\nmax_turns = 3\n[repos]\napp = "/srv/src/app/"\n' })
      expect(yield* set.run(load(set.repo))).toMatchObject({ hostName: "buildbox", maxTurns: 3, repos: { app: "/srv/src/app" } })
      const bad = world({ "magi.toml": '[host]\nname = "../etc"\n' })
      expect((yield* bad.run(Effect.flip(load(bad.repo)))).message).toContain("`host.name` must be 1 to 63 letters")
      const relative = world({ "magi.toml": '[repos]\napp = "src/app"\n' })
      expect((yield* relative.run(Effect.flip(load(relative.repo)))).message).toContain("`repos.app` must map a plain name")
      // A cross-machine claim lasts two minutes unless `[host] claim_ttl` says otherwise, never under thirty seconds.
      expect(yield* none.run(load(none.repo))).toMatchObject({ claimTtlSecs: 120 })
      const ttl = world({ "user:config.toml": "[host]\nclaim_ttl = 45\n" })
      expect(yield* ttl.run(load(ttl.repo))).toMatchObject({ claimTtlSecs: 45 })
      const short = world({ "magi.toml": "[host]\nclaim_ttl = 5\n" })
      expect((yield* short.run(Effect.flip(load(short.repo)))).message).toContain("`host.claim_ttl` must be at least 30 seconds, not 5")
      const word = world({ "magi.toml": '[host]\nclaim_ttl = "1m"\n' })
      expect((yield* word.run(Effect.flip(load(word.repo)))).message).toContain("`host.claim_ttl` must be a whole number of seconds above 0")
      // A 2-core 4 GiB laptop runs 2 turns; 8 cores with 4 GiB, still 2; one core, 1.
      expect([defaultMaxTurns(2, 4 * 1024 ** 3), defaultMaxTurns(8, 4 * 1024 ** 3), defaultMaxTurns(1, 64 * 1024 ** 3), defaultMaxTurns(4, 512 * 1024 ** 2)])
        .toEqual([2, 2, 1, 1])
    }))

  it.effect("refuses a [daemon] count that is not a whole number above 0, and an implementer that names nothing", () =>
    Effect.gen(function* () {
      const zero = world({ "magi.toml": "[daemon]\nmax_concurrent_runs = 0\n" })
      expect((yield* zero.run(Effect.flip(load(zero.repo)))).message).toContain("`daemon.max_concurrent_runs` must be a whole number above 0, not 0")
      const half = world({ "magi.toml": "[daemon]\nmax_attempts = 1.5\n" })
      expect((yield* half.run(Effect.flip(load(half.repo)))).message).toContain("`daemon.max_attempts` must be a whole number above 0")
      const blank = world({ "magi.toml": '[roles]\nimplementer = ""\n' })
      expect((yield* blank.run(Effect.flip(load(blank.repo)))).message).toContain("`roles.implementer` must name an agent")
    }))

  it.effect("reads [roles] conductor (none by default) and [daemon] max_deputies (2 by default), refusing a blank conductor", () =>
    Effect.gen(function* () {
      const none = world({})
      expect(yield* none.run(load(none.repo))).toMatchObject({ conductor: null, maxDeputies: 2 })
      const set = world({ "magi.toml": '[daemon]\nmax_deputies = 1\n[roles]\nconductor = " boss "\n' })
      expect(yield* set.run(load(set.repo))).toMatchObject({ conductor: "boss", maxDeputies: 1 })
      const blank = world({ "magi.toml": '[roles]\nconductor = ""\n' })
      expect((yield* blank.run(Effect.flip(load(blank.repo)))).message).toContain("`roles.conductor` must name an agent")
    }))

  it.effect("warns about a table or key it does not know, naming the file, the line and the nearest known name, once", () =>
    Effect.gen(function* () {
      const w = world({
        "user:config.toml": '[notify]\ncomand = ["ntfy"]\n',
        "magi.toml":
          '[ask]\nwait_slice = 30\n\n[deamon]\nmax_attempts = 3\n\n[agents.fast]\nkind = "claude"\nmodle = "haiku"\n\n[store]\nurl = "postgres://db/magi"\n\n[colour]\ntheme = "dark"\n'
      })
      const warnings: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
        })
      )
      const settings = yield* w.run(load(w.repo)).pipe(Effect.provide(capture))
      // The settings still load: an unknown name is ignored, never fatal.
      expect(settings.waitSliceSecs).toBe(30)
      const user = NodePath.join(w.configHome, "magi", "config.toml")
      const repo = NodePath.join(w.repo, "magi.toml")
      expect(warnings).toEqual([
        `${user}:2: unknown key \`notify.comand\`, ignored; did you mean \`notify.command\`?`,
        `${repo}:4: unknown table [deamon], ignored; did you mean [daemon]?`,
        `${repo}:9: unknown key \`agents.fast.modle\`, ignored; did you mean \`agents.fast.model\`?`,
        `${repo}:14: unknown table [colour], ignored; magi reads \`answer_timeout\`, [ask], [notify], [daemon], [roles], [graph], [verify], [blind], [agents], [store], [web], [host], [repos], [approvals], [forge] here`
      ])
      // Read again (a loop reads its config every tick): no second warning.
      yield* w.run(load(w.repo)).pipe(Effect.provide(capture))
      expect(warnings).toHaveLength(4)
    }))

  it.effect("reads [notify] ntfy (ntfy.sh unless a server is named) and [web] public_url, refusing a bad topic, server or token_env", () =>
    Effect.gen(function* () {
      const ok = world({ "magi.toml": '[notify]\nntfy = { topic = "abc_DEF-123", token_env = "NTFY_TOKEN" }\n[web]\npublic_url = "https://box.ts.net/"\n' })
      const s = yield* ok.run(load(ok.repo))
      expect(s.ntfy).toEqual({ server: "https://ntfy.sh", topic: "abc_DEF-123", tokenEnv: "NTFY_TOKEN" })
      expect(s.publicUrl).toBe("https://box.ts.net")
      const none = world({})
      expect((yield* none.run(load(none.repo))).ntfy).toBeNull()
      const refusals: Array<[string, RegExp]> = [
        ['[notify]\nntfy = { topic = "has spaces" }\n', /`notify.ntfy.topic` must be an ntfy topic name/],
        ['[notify]\nntfy = { topic = "t", server = "ftp://x" }\n', /`notify.ntfy.server` must be an http/],
        ['[notify]\nntfy = { topic = "t", token_env = "tk_1234 secret" }\n', /`notify.ntfy.token_env` must name an environment variable/],
        ['[notify]\nntfy = "t"\n', /`notify.ntfy` must be a table/],
        ['[web]\npublic_url = "https://me:pw@box"\n', /`web.public_url` must be an http:\/\/ or https:\/\/ address with no password/]
      ]
      for (const [text, words] of refusals) {
        const w = world({ "magi.toml": text })
        const e = yield* Effect.flip(w.run(load(w.repo)))
        expect(e.message).toMatch(words)
      }
    }))

  it.effect("takes MAGI_WAIT_SLICE over the files, for agent CLIs with short tool timeouts", () => {
    const w = world({ "magi.toml": "[ask]\nwait_slice = 200\n" }, { MAGI_WAIT_SLICE: "45" })
    return w.run(load(w.repo)).pipe(Effect.map((s) => expect(s.waitSliceSecs).toBe(45)))
  })

  it.effect("finds the home in MAGI_HOME, then XDG_DATA_HOME, then ~/.local/share", () =>
    Effect.gen(function* () {
      const homeWith = (env: Record<string, string>) =>
        Effect.map(MagiHome, (h) => h.dir).pipe(
          Effect.provide(MagiHome.fromEnv),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      expect(yield* homeWith({ MAGI_HOME: "/srv/magi", XDG_DATA_HOME: "/x", HOME: "/h" })).toBe("/srv/magi")
      expect(yield* homeWith({ XDG_DATA_HOME: "/x", HOME: "/h" })).toBe("/x/magi")
      expect(yield* homeWith({ HOME: "/h" })).toBe("/h/.local/share/magi")
    }))
})

describe("[web] public_url", () => {
  it.effect("is read without a trailing slash, and anything but an http(s) address is refused by name", () =>
    Effect.gen(function* () {
      expect((yield* settingsOf({ web: { public_url: "https://box.tail1.ts.net/" } }, ["c.toml"])).publicUrl).toBe("https://box.tail1.ts.net")
      expect((yield* settingsOf({}, [])).publicUrl).toBeNull()
      const refused = yield* Effect.flip(settingsOf({ web: { public_url: "box.tail1.ts.net" } }, ["c.toml"]))
      expect(refused.message).toContain("`web.public_url` must be an http:// or https:// address")
    }).pipe(Effect.provide(NodeContext.layer)))
})
