/**
 * `magi web pair` and `magi web`'s first lines as the owner reads them
 * (issue 27, item 18): a loopback page needs no pairing and says so, the
 * code still comes with a link, the QR is drawn on a terminal only, and a
 * public_url beyond this machine is not contradicted.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI, owner } from "./cliSupport.js"

const QR = /[▀▄█]/
const withPublicUrl = (o: ReturnType<typeof owner>, url: string) => {
  const dir = NodePath.join(o.env.XDG_CONFIG_HOME!, "magi")
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "config.toml"), `[web]\npublic_url = "${url}"\n`)
}

describe("magi web pair", () => {
  it("on a loopback page says pairing is unneeded there, and still prints the code with a link and no QR into a pipe", { timeout: 60_000 }, async () => {
    const o = owner()
    const done = await o.run(["web", "pair"])
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toContain("http://127.0.0.1:7878 is on this machine, and lets this machine in without pairing")
    const code = /^pairing code: (\S+)$/m.exec(done.stdout)![1]!
    expect(done.stdout).toContain(`on the device, open http://127.0.0.1:7878/pair#code=${code}\n`)
    expect(done.stdout).not.toMatch(QR)
    expect(done.stdout).not.toContain("\x1b[")
  })

  it("for a public_url beyond this machine says nothing of it being unneeded, and draws the QR on a terminal", { timeout: 60_000 }, () => {
    const o = owner()
    withPublicUrl(o, "https://box.example.ts.net")
    // A real pty, as an owner's terminal is (`script` gives the command one).
    const done = spawnSync("script", ["-qec", `${process.execPath} ${MAGI} web pair`, "/dev/null"], { cwd: o.cwd, env: o.env, encoding: "utf8" })
    expect(done.status, done.stderr).toBe(0)
    expect(done.stdout).not.toContain("without pairing")
    expect(done.stdout).toMatch(/on the device, scan this or open https:\/\/box\.example\.ts\.net\/pair#code=\S+\r?\n/)
    expect(done.stdout).toMatch(QR)
  })
})

describe("magi web behind a public_url beyond this machine", () => {
  it("does not tell the owner to export MAGI_WEB_URL, nor that the phone cannot reach it", { timeout: 60_000 }, async () => {
    const o = owner()
    withPublicUrl(o, "https://box.example.ts.net")
    const web = o.start(["web", "--port", "0", "--no-loop"])
    try {
      await o.until(() => web.stderr().includes("serving the questions"), "magi web to serve")
    } finally {
      web.child.kill("SIGTERM")
    }
    const done = await web.done
    expect(done.stderr).toContain("notifications link to https://box.example.ts.net")
    expect(done.stderr).not.toContain("export MAGI_WEB_URL")
    expect(done.stderr).not.toContain("cannot reach it")
  })
})
