/**
 * Issue 18, point 6: `magi init` under a real pty (`script`), answering its
 * questions as a person would, with a stand-in `claude` on PATH; then again
 * with `--yes`, which must leave the config it wrote untouched. With a page
 * reachable beyond the machine it pairs the phone; with a stand-in ntfy and
 * a running `magi web`, its test notification waits for the button's press.
 */
import { describe, expect, it } from "vitest"
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { parse } from "smol-toml"
import * as QrText from "../../src/platform/QrText.js"
import { MAGI } from "./cliSupport.js"
import { tempDirSync } from "../support.js"
import { press, standInNtfy, writeNtfyConfig } from "../web/ntfy-support.js"
import { startWeb } from "../web/web-support.js"

const setup = () => {
  const dir = tempDirSync()
  const bin = NodePath.join(dir, "bin")
  NodeFs.mkdirSync(bin)
  NodeFs.writeFileSync(NodePath.join(bin, "claude"), "#!/bin/sh\necho '2.0.1 (Claude Code)'\n", { mode: 0o755 })
  const work = NodePath.join(dir, "work")
  NodeFs.mkdirSync(NodePath.join(work, "app", ".git"), { recursive: true })
  const env: Record<string, string> & { MAGI_HOME: string; XDG_CONFIG_HOME: string } = {
    PATH: `${bin}:${NodePath.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dir,
    TERM: "xterm",
    XDG_CONFIG_HOME: NodePath.join(dir, "config"),
    MAGI_HOME: NodePath.join(dir, "home")
  }
  return { dir, bin, work, env, config: NodePath.join(dir, "config", "magi", "config.toml") }
}

const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`

/**
 * `magi init` under a pty; each prompt's nth showing gets the nth reply.
 * Resolves with its exit code and everything it printed.
 */
const initAtTerminal = (s: ReturnType<typeof setup>, replies: Record<string, ReadonlyArray<string>>, onOutput: (out: string) => void = () => undefined) => {
  const child = spawn("script", ["-qec", `${shellQuote(process.execPath)} ${shellQuote(MAGI)} init`, "/dev/null"], {
    cwd: s.work,
    env: s.env,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let out = ""
  const given: Record<string, number> = {}
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString()
    for (const [prompt, answers] of Object.entries(replies)) {
      const shown = out.split(prompt).length - 1
      for (let n = given[prompt] ?? 0; n < Math.min(shown, answers.length); n++) child.stdin.write(answers[n]!)
      given[prompt] = Math.max(given[prompt] ?? 0, Math.min(shown, answers.length))
    }
    onOutput(out.replace(/\r/g, ""))
  })
  return new Promise<{ code: number | null; text: string }>((done) => child.once("exit", (code) => done({ code, text: out.replace(/\r/g, "") })))
}

describe("magi init", { timeout: 120_000 }, () => {
  it("with no agent CLI on PATH offers a command agent, pointing at its docs", () => {
    const s = setup()
    const env = { ...s.env, PATH: `${NodePath.dirname(process.execPath)}:/usr/bin:/bin` }
    const ran = spawnSync(process.execPath, [MAGI, "init", "--yes"], { cwd: s.work, env, encoding: "utf8" })
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("agents: none of claude, codex, opencode, agy is on PATH.")
    expect(ran.stdout).toContain('a `command` agent, e.g. [agents.mine] kind = "command"')
    expect(ran.stdout).toContain("docs/agents/command.md")
    // The doctor after it names the file init wrote for the agent, not a magi.toml there is none of.
    expect(ran.stdout).toContain(`configure [agents.<id>] in ${s.config} (any script or CLI, as a command agent: docs/agents/command.md)`)
  })

  it("warns that a loopback page address cannot reach a phone", async () => {
    const s = setup()
    const { code, text } = await initAtTerminal(s, { "[Y/n] ": ["n\n", "n\n"], "Empty for nowhere yet: ": ["http://127.0.0.1:7878\n"] })
    expect(code, text).toBe(0)
    expect(text).toContain("warning: http://127.0.0.1:7878 is on this machine only, so a phone cannot reach it")
    expect(text).toContain(`config: wrote ${s.config}`)
  })

  it("asks at a terminal, shows the ntfy QR, writes a commented config, and ends with the doctor", async () => {
    const s = setup()
    // Each prompt's nth showing gets the nth reply: ntfy yes, pair the
    // phone yes, no test notification (ntfy.sh is not reached from a test);
    // an address that is not one (asked again), then a real one.
    const { code, text } = await initAtTerminal(s, {
      "[Y/n] ": ["y\n", "y\n", "n\n"],
      "Empty for nowhere yet: ": ["box.example\n", "https://box.example.ts.net/\n"]
    })
    expect(code, text).toBe(0)
    expect(text).toContain("agent claude: 2.0.1 (Claude Code)")
    const link = /ntfy: subscribe to (https:\/\/ntfy\.sh\/magi-[a-z2-7]{20}) in the ntfy app/.exec(text)?.[1]
    expect(link).toBeDefined()
    // The QR drawn is the subscribe link's.
    const qr = text.slice(text.indexOf("(scan this with the phone):\n") + "(scan this with the phone):\n".length, text.indexOf("Where does your phone"))
    const drawn = QrText.readBack(qr)
    const inner = QrText.modules(link!)
    expect(drawn.slice(QrText.QUIET_ZONE, QrText.QUIET_ZONE + inner.length).map((row) => row.slice(QrText.QUIET_ZONE, QrText.QUIET_ZONE + inner.length)))
      .toEqual(inner)
    expect(text).toContain("That is not an http:// or https:// address.")
    expect(text).toContain(`config: wrote ${s.config}`)
    // The page is reached beyond this machine: the phone pairs now, by the link in the QR.
    expect(text).toContain("Pair your phone with magi web at https://box.example.ts.net now? [Y/n] ")
    const pairLink = /on the device, scan this or open (https:\/\/box\.example\.ts\.net\/pair#code=[0-9A-Z]{4}-[0-9A-Z]{4})$/m.exec(text)?.[1]
    expect(pairLink).toBeDefined()
    expect(NodeFs.readdirSync(NodePath.join(s.env.MAGI_HOME, "pairing")).filter((f) => f.endsWith(".json"))).toHaveLength(1)
    expect(text).toContain("Send a test notification with a button to press, and wait for the press? [Y/n] ")
    expect(text).not.toContain("notifying:")
    expect(text).toMatch(/magi doctor:\nok {4}config: read /)

    const written = NodeFs.readFileSync(s.config, "utf8")
    expect(written).toMatch(/^# magi's config, written by `magi init`/)
    expect(written).toContain(`#   ${NodePath.join(s.work, "app")}`)
    expect(parse(written)).toEqual({
      agents: { claude: { kind: "claude", command: NodePath.join(s.bin, "claude") } },
      roles: { implementer: "claude" },
      notify: { ntfy: { server: "https://ntfy.sh", topic: link!.slice("https://ntfy.sh/".length) } },
      web: { public_url: "https://box.example.ts.net" }
    })

    // Again, with every default: nothing it was not asked to change is changed.
    const again = spawnSync(process.execPath, [MAGI, "init", "--yes"], { cwd: s.work, env: s.env, encoding: "utf8" })
    expect(again.status).toBe(0)
    expect(again.stdout).toContain(`config: keeping ${s.config} as it is`)
    expect(NodeFs.readFileSync(s.config, "utf8")).toBe(written)
  })

  it("with --yes takes the defaults without asking: the agents found, ntfy with a fresh topic, no page address", () => {
    const s = setup()
    const ran = spawnSync(process.execPath, [MAGI, "init", "--yes"], { cwd: s.work, env: s.env, encoding: "utf8", input: "" })
    expect(ran.status).toBe(0)
    expect(ran.stdout).not.toContain("[Y/n]")
    const config = parse(NodeFs.readFileSync(s.config, "utf8")) as { notify: { ntfy: { topic: string } }; web?: unknown }
    expect(config.notify.ntfy.topic).toMatch(/^magi-[a-z2-7]{20}$/)
    expect(config.web).toBeUndefined()
    // Each run draws its own topic.
    const other = setup()
    spawnSync(process.execPath, [MAGI, "init", "--yes"], { cwd: other.work, env: other.env, encoding: "utf8" })
    expect((parse(NodeFs.readFileSync(other.config, "utf8")) as typeof config).notify.ntfy.topic).not.toBe(config.notify.ntfy.topic)
  })

  it("sends a test question whose button, pressed, reaches magi web, and says so", async () => {
    const s = setup()
    const ntfy = await standInNtfy()
    const web = await startWeb(s.env.MAGI_HOME, 0, { env: s.env, cwd: s.work })
    try {
      writeNtfyConfig(s.env.XDG_CONFIG_HOME, ntfy.url, web.url)
      let pressed = false
      const { code, text } = await initAtTerminal(s, { "[Y/n] ": ["y\n"] }, (out) => {
        if (pressed || !out.includes("Waiting up to")) return
        pressed = true
        // The owner presses the one button, as the ntfy app does.
        void ntfy.nth(1).then((published) => press(published.message, "It works"))
      })
      expect(code, text).toBe(0)
      // Reached beyond loopback it is not (the page is at 127.0.0.1): no pairing asked.
      expect(text).not.toContain("Pair your phone")
      expect(text).toContain(`config: keeping ${s.config} as it is`)
      expect(text).toContain(`notifying: ntfy topic mag… (17 characters) at ${ntfy.url}`)
      expect(text).not.toContain("magi-one-tap-test")
      expect(text).toMatch(/pressed after \d+s: the button reached magi web/)
      expect(text).toMatch(/magi doctor:\n/)
      const published = ntfy.published[0]!.message
      expect(published.title).toBe("magi asks · magi-init")
      expect(published.actions?.map((a) => a.label)).toEqual(["It works"])
    } finally {
      await web.stop()
      await ntfy.close()
    }
  })

  it("says how long it waited when the press never reaches magi web", async () => {
    const s = setup()
    const ntfy = await standInNtfy()
    try {
      // The page's address names a port nothing listens on: a press could not arrive. The wait is shortened for the test.
      writeNtfyConfig(s.env.XDG_CONFIG_HOME, ntfy.url, "http://127.0.0.1:9")
      const { code, text } = await initAtTerminal({ ...s, env: { ...s.env, MAGI_INIT_PRESS_WAIT_SECS: "2" } }, { "[Y/n] ": ["y\n"] })
      expect(code, text).toBe(0)
      expect(text).toMatch(/no press reached magi web in \d+s\. Check that the notification arrived, that magi web runs at http:\/\/127\.0\.0\.1:9/)
      expect(ntfy.published).toHaveLength(1)
    } finally {
      await ntfy.close()
    }
  })
})
