/**
 * What `magi service install` writes: a systemd user unit on Linux, a
 * launchd agent on macOS, each running `magi serve` (or `magi web`) from
 * boot and again after a failure. Pure text from the facts of this
 * install, so every unit is tested without a service manager.
 *
 * The unit names the exact node and `magi.js` that installed it (a service
 * starts with a bare environment: no shell profile, no nvm), and carries
 * the installer's `PATH`, so the agents' CLIs `magi serve` starts are found
 * as they were at the terminal.
 */
import * as NodePath from "node:path"

export type Manager = "systemd" | "launchd"

/** What the service runs: the waiter alone, or the page with the waiter in it. */
export type What = "serve" | "web"

export interface UnitFacts {
  readonly what: What
  /** `process.execPath`. */
  readonly node: string
  /** The real path of the `magi.js` bundle. */
  readonly magi: string
  /** `PATH` at install time. */
  readonly path: string
  /** `MAGI_HOME`, when one was set or passed: the service serves that home. */
  readonly home: string | undefined
  /** Where the service starts: its `magi.toml` is read from there (the folder `install` ran in). */
  readonly cwd: string
}

/** After a failure, wait this long before starting again: long enough not to spin on a broken config, short enough that a crash costs little. */
export const RESTART_AFTER_SECS = 5

/** The unit's name: `magi.service` or `magi-web.service`. */
export const systemdName = (what: What): string => (what === "serve" ? "magi.service" : "magi-web.service")

/** The launchd agent's label. */
export const launchdLabel = (what: What): string => (what === "serve" ? "dev.magi.serve" : "dev.magi.web")

/** Where systemd looks for a user's units: `$XDG_CONFIG_HOME/systemd/user` (default `~/.config`). */
export const systemdDir = (env: { readonly XDG_CONFIG_HOME?: string | undefined; readonly HOME?: string | undefined }): string =>
  NodePath.join(
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : NodePath.join(env.HOME ?? "", ".config"),
    "systemd",
    "user"
  )

/** Where launchd looks for a user's agents. */
export const launchdDir = (env: { readonly HOME?: string | undefined }): string => NodePath.join(env.HOME ?? "", "Library", "LaunchAgents")

/** The unit file's path. */
export const unitPath = (manager: Manager, what: What, env: Readonly<Record<string, string | undefined>>): string =>
  manager === "systemd" ? NodePath.join(systemdDir(env), systemdName(what)) : NodePath.join(launchdDir(env), `${launchdLabel(what)}.plist`)

const argv = (facts: UnitFacts): ReadonlyArray<string> => [facts.node, facts.magi, facts.what]

/**
 * One word of a systemd command line or assignment: double-quoted, with
 * `\` and `"` escaped, and `%` and `$` doubled so systemd expands nothing.
 */
export const systemdWord = (word: string): string =>
  `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$").replace(/\n/g, "\\n")}"`

/** The systemd user unit. */
export const systemdUnit = (facts: UnitFacts): string => {
  const env = [["PATH", facts.path], ...(facts.home === undefined ? [] : [["MAGI_HOME", facts.home]])]
  return [
    "# Written by `magi service install`; `magi service uninstall` removes it.",
    "[Unit]",
    facts.what === "serve"
      ? "Description=magi serve: delivers the owner's answers to coding agents, and works the queue"
      : "Description=magi web: the phone page, and the waiter that delivers answers",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${argv(facts).map(systemdWord).join(" ")}`,
    `WorkingDirectory=${systemdWord(facts.cwd)}`,
    ...env.map(([k, v]) => `Environment=${systemdWord(`${k}=${v}`)}`),
    "Restart=on-failure",
    `RestartSec=${RESTART_AFTER_SECS}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    ""
  ].join("\n")
}

const xml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The launchd agent: run at load (login), kept alive after a failure. */
export const launchdPlist = (facts: UnitFacts, logDir: string): string => {
  const env: Array<[string, string]> = [["PATH", facts.path], ...(facts.home === undefined ? [] : [["MAGI_HOME", facts.home] as [string, string]])]
  const log = NodePath.join(logDir, `magi-${facts.what}.log`)
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `magi service install`; `magi service uninstall` removes it. -->",
    '<plist version="1.0">',
    "<dict>",
    `  <key>Label</key><string>${xml(launchdLabel(facts.what))}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...argv(facts).map((a) => `    <string>${xml(a)}</string>`),
    "  </array>",
    `  <key>WorkingDirectory</key><string>${xml(facts.cwd)}</string>`,
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...env.map(([k, v]) => `    <key>${xml(k)}</key><string>${xml(v)}</string>`),
    "  </dict>",
    "  <key>RunAtLoad</key><true/>",
    // Started again when it exits with a failure, not after a clean stop.
    "  <key>KeepAlive</key>",
    "  <dict><key>SuccessfulExit</key><false/></dict>",
    `  <key>ThrottleInterval</key><integer>${RESTART_AFTER_SECS}</integer>`,
    `  <key>StandardOutPath</key><string>${xml(log)}</string>`,
    `  <key>StandardErrorPath</key><string>${xml(log)}</string>`,
    "</dict>",
    "</plist>",
    ""
  ].join("\n")
}

/** `loginctl show-user … --property=Linger` says lingering is off: the user's services stop at logout and wait for a login after boot. */
export const lingerOff = (loginctlOutput: string): boolean => /^Linger=no\s*$/m.test(loginctlOutput)
