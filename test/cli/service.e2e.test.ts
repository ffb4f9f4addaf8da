/**
 * `magi service install|status|uninstall` and `magi doctor`'s service line,
 * as real processes, with a stand-in `systemctl` and `loginctl` first on
 * `PATH` (no real systemd here): each logs the command line it was given,
 * and `systemctl is-active` answers what the test wrote for it.
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "./cliSupport.js"
import { tempDirSync } from "../support.js"

const fakeBin = (dir: string, linger: "yes" | "no") => {
  const bin = NodePath.join(dir, "bin")
  NodeFs.mkdirSync(bin, { recursive: true })
  const log = NodePath.join(dir, "calls.log")
  NodeFs.writeFileSync(
    NodePath.join(bin, "systemctl"),
    `#!/bin/sh\necho "systemctl $*" >> "${log}"\nif [ "$2" = "is-active" ]; then cat "${dir}/active" 2>/dev/null || echo inactive; fi\nexit 0\n`,
    { mode: 0o755 }
  )
  NodeFs.writeFileSync(NodePath.join(bin, "loginctl"), `#!/bin/sh\necho "loginctl $*" >> "${log}"\necho "Linger=${linger}"\n`, { mode: 0o755 })
  return { bin, calls: () => (NodeFs.existsSync(log) ? NodeFs.readFileSync(log, "utf8") : "") }
}

const run = (dir: string, bin: string, args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [MAGI, ...args], {
    cwd: dir,
    encoding: "utf8",
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, USER: "ana", MAGI_HOME: NodePath.join(dir, "home"), XDG_CONFIG_HOME: NodePath.join(dir, "config") }
  })

describe("magi service on Linux (a stand-in systemctl)", { timeout: 120_000 }, () => {
  it("writes the user unit, enables and starts it, hints at lingering, reports it running, and removes it", () => {
    const dir = tempDirSync()
    const { bin, calls } = fakeBin(dir, "no")
    const installed = run(dir, bin, ["service", "install"])
    expect(installed.stderr).toBe("")
    expect(installed.status).toBe(0)
    const unitFile = NodePath.join(dir, "config", "systemd", "user", "magi.service")
    expect(installed.stdout).toContain(`installed ${unitFile}\nmagi.service is enabled and started`)
    expect(installed.stdout).toContain("`loginctl enable-linger ana`")
    const unit = NodeFs.readFileSync(unitFile, "utf8")
    expect(unit).toContain(`ExecStart="${process.execPath}" "${NodeFs.realpathSync(MAGI)}" "serve"`)
    expect(unit).toContain(`Environment="MAGI_HOME=${NodePath.join(dir, "home")}"`)
    expect(unit).toContain("Restart=on-failure")
    expect(calls()).toBe(
      "systemctl --user daemon-reload\nsystemctl --user enable --now magi.service\nloginctl show-user ana --property=Linger\n"
    )

    // Not active yet: status says so and exits 1; the doctor warns.
    const idle = run(dir, bin, ["service", "status"])
    expect(idle.status).toBe(1)
    expect(idle.stdout).toBe(`inactive: ${unitFile}\n`)
    expect(run(dir, bin, ["doctor"]).stdout).toMatch(/^warn {2}service: installed but inactive/m)

    NodeFs.writeFileSync(NodePath.join(dir, "active"), "active\n")
    const active = run(dir, bin, ["service", "status"])
    expect(active.status).toBe(0)
    expect(active.stdout).toBe(`active: ${unitFile}\n`)
    expect(run(dir, bin, ["doctor"]).stdout).toMatch(/^ok {4}service: active: /m)

    const removed = run(dir, bin, ["service", "uninstall"])
    expect(removed.stdout).toBe("stopped and removed the magi serve service\n")
    expect(NodeFs.existsSync(unitFile)).toBe(false)
    expect(calls()).toContain("systemctl --user disable --now magi.service\nsystemctl --user daemon-reload\n")
    expect(run(dir, bin, ["service", "uninstall"]).stdout).toBe("no magi serve service was installed\n")
  })

  it("installs magi web as its own unit, with no linger hint when lingering is on, and the doctor warns when nothing is installed", () => {
    const dir = tempDirSync()
    const { bin } = fakeBin(dir, "yes")
    expect(run(dir, bin, ["doctor"]).stdout).toMatch(/^warn {2}service: the waiter is not running as a service.* — `magi service install`/m)
    const installed = run(dir, bin, ["service", "install", "--web"])
    expect(installed.status).toBe(0)
    expect(installed.stdout).not.toContain("linger")
    expect(NodeFs.readFileSync(NodePath.join(dir, "config", "systemd", "user", "magi-web.service"), "utf8")).toContain('"web"')
  })

  it("says plainly when systemctl --user cannot run, keeping the unit it wrote", () => {
    const dir = tempDirSync()
    const bin = NodePath.join(dir, "bin")
    NodeFs.mkdirSync(bin)
    NodeFs.writeFileSync(NodePath.join(bin, "systemctl"), "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n", { mode: 0o755 })
    const installed = run(dir, bin, ["service", "install"])
    expect(installed.status).toBe(1)
    expect(installed.stderr).toMatch(/^magi: wrote .*magi\.service, but `systemctl --user daemon-reload` failed: Failed to connect to bus: No medium found\n$/)
  })
})
