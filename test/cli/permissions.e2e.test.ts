/**
 * What magi makes is private to its owner (issue 27, item 14): the home
 * 0700, the config holding the ntfy topic 0600, and `magi doctor` agreeing.
 * An existing home is left as it is, and the doctor says the chmod.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { owner } from "./cliSupport.js"

const modeOf = (path: string) => NodeFs.statSync(path).mode & 0o777

describe("permissions of what magi makes", () => {
  it("makes the home 0700 and init's config 0600, and the doctor finds nothing to warn about", { timeout: 60_000 }, async () => {
    const o = owner()
    expect(NodeFs.existsSync(o.home)).toBe(false)
    const listed = await o.run(["answer", "--list"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(modeOf(o.home).toString(8)).toBe("700")
    const init = await o.run(["init", "--yes"])
    expect(init.code, init.stderr).toBe(0)
    const config = /config: wrote (.*)\n/.exec(init.stdout)![1]!
    expect(modeOf(config).toString(8)).toBe("600")
    const doctor = await o.run(["doctor"])
    expect(doctor.stdout).toMatch(/^ok +home .*: permissions: mode 700$/m)
  })

  it("leaves an existing home as its owner made it, and the doctor says how to make it private", { timeout: 60_000 }, async () => {
    const o = owner()
    NodeFs.mkdirSync(o.home, { mode: 0o755 })
    NodeFs.chmodSync(o.home, 0o755)
    expect((await o.run(["answer", "--list"])).code).toBe(0)
    expect(modeOf(o.home).toString(8)).toBe("755")
    const doctor = await o.run(["doctor"])
    expect(doctor.stdout).toMatch(/^warn +home .*: permissions: mode 755: /m)
    expect(doctor.stdout).toContain(`chmod 700 ${o.home}`)
    expect(NodePath.isAbsolute(o.home)).toBe(true)
  })
})
