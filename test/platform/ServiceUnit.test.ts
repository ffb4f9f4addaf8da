import { describe, expect, it } from "vitest"
import * as Unit from "../../src/platform/ServiceUnit.js"

const facts: Unit.UnitFacts = {
  what: "serve",
  node: "/opt/node 20/bin/node",
  magi: "/usr/lib/node_modules/magi/dist/magi.js",
  path: "/home/ana/.local/bin:/usr/bin",
  home: "/home/ana/magi-$home%",
  cwd: "/home/ana/src"
}

describe("the systemd user unit", () => {
  it("runs magi serve with the installing node and PATH, from the folder install ran in, restarting on failure, at boot", () => {
    expect(Unit.systemdUnit(facts)).toBe(
      [
        "# Written by `magi service install`; `magi service uninstall` removes it.",
        "[Unit]",
        "Description=magi serve: delivers the owner's answers to coding agents, and works the queue",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        'ExecStart="/opt/node 20/bin/node" "/usr/lib/node_modules/magi/dist/magi.js" "serve"',
        'WorkingDirectory="/home/ana/src"',
        'Environment="PATH=/home/ana/.local/bin:/usr/bin"',
        // `$` and `%` are doubled: systemd expands neither.
        'Environment="MAGI_HOME=/home/ana/magi-$$home%%"',
        "Restart=on-failure",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=default.target",
        ""
      ].join("\n")
    )
  })

  it("runs magi web under its own name with --web, and leaves MAGI_HOME out when none was given", () => {
    const unit = Unit.systemdUnit({ ...facts, what: "web", home: undefined })
    expect(unit).toContain('"/usr/lib/node_modules/magi/dist/magi.js" "web"')
    expect(unit).not.toContain("MAGI_HOME")
    expect(Unit.systemdName("web")).toBe("magi-web.service")
  })

  it("is written under $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user", () => {
    expect(Unit.unitPath("systemd", "serve", { XDG_CONFIG_HOME: "/x/cfg", HOME: "/home/ana" })).toBe("/x/cfg/systemd/user/magi.service")
    expect(Unit.unitPath("systemd", "web", { HOME: "/home/ana" })).toBe("/home/ana/.config/systemd/user/magi-web.service")
  })

  it("quotes a word with quotes and backslashes so systemd reads it back whole", () => {
    expect(Unit.systemdWord('a "b" \\c')).toBe('"a \\"b\\" \\\\c"')
  })

  it("reads lingering off from loginctl", () => {
    expect(Unit.lingerOff("Linger=no\n")).toBe(true)
    expect(Unit.lingerOff("Linger=yes\n")).toBe(false)
  })
})

describe("the launchd agent", () => {
  it("runs at load, is kept alive after a failure only, logs to ~/Library/Logs, and escapes its strings", () => {
    const plist = Unit.launchdPlist({ ...facts, cwd: "/Users/ana/a&b" }, "/Users/ana/Library/Logs")
    expect(plist).toContain("<key>Label</key><string>dev.magi.serve</string>")
    expect(plist).toContain(
      "    <string>/opt/node 20/bin/node</string>\n    <string>/usr/lib/node_modules/magi/dist/magi.js</string>\n    <string>serve</string>"
    )
    expect(plist).toContain("<key>RunAtLoad</key><true/>")
    expect(plist).toContain("<dict><key>SuccessfulExit</key><false/></dict>")
    expect(plist).toContain("<string>/Users/ana/a&amp;b</string>")
    expect(plist).toContain("<key>StandardErrorPath</key><string>/Users/ana/Library/Logs/magi-serve.log</string>")
    expect(Unit.unitPath("launchd", "web", { HOME: "/Users/ana" })).toBe("/Users/ana/Library/LaunchAgents/dev.magi.web.plist")
  })
})
