/**
 * Issue 18, point 8: magi installs as a package. The repository is packed
 * as `npm pack` packs it (from the built bundle), installed globally into a
 * temp prefix from the tarball alone (`--offline`: it needs nothing from
 * the registry), and the installed `magi` is run from a folder that is no
 * repository, with a home and config of its own.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"

/** A global install is the bundle and the docs: well under this. */
const MAX_TARBALL_BYTES = 3 * 1024 * 1024
const MAX_UNPACKED_BYTES = 6 * 1024 * 1024

const npm = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  execFileSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false", ...env } })

const sizeOf = (dir: string): number =>
  NodeFs.readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? sizeOf(NodePath.join(dir, e.name)) : NodeFs.statSync(NodePath.join(dir, e.name)).size),
    0
  )

describe("magi as an installed package", { timeout: 300_000 }, () => {
  let tarball: string
  let prefix: string
  let installed: string
  let manifestBefore: string
  const work = tempDirSync()

  beforeAll(() => {
    // The bundle is built (`npm run build`); the pack runs its scripts as the owner's `npm pack` does.
    manifestBefore = NodeFs.readFileSync("package.json", "utf8")
    const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", work], process.cwd())) as Array<{
      filename: string
      files: Array<{ path: string }>
    }>
    tarball = NodePath.join(work, packed[0]!.filename)
    prefix = NodePath.join(work, "prefix")
    // No --ignore-scripts: whatever the package would run on a consumer's machine runs here too.
    npm(["install", "--global", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", tarball], work, {
      npm_config_cache: NodePath.join(work, "npm-cache")
    })
    installed = NodePath.join(prefix, "lib", "node_modules", "magi")
  }, 300_000)

  it("is a few MB: the bundle and the docs, no tests, no sources, no dependencies", () => {
    expect(NodeFs.statSync(tarball).size).toBeLessThan(MAX_TARBALL_BYTES)
    expect(sizeOf(installed)).toBeLessThan(MAX_UNPACKED_BYTES)
    const top = NodeFs.readdirSync(installed).sort()
    expect(top).toEqual(["README.md", "dist", "docs", "package.json"])
    expect(NodeFs.existsSync(NodePath.join(installed, "node_modules"))).toBe(false)
    expect(NodeFs.readdirSync(NodePath.join(installed, "dist")).sort()).toEqual(["bin", "magi.cjs", "magi.js", "package.json"])
  })

  it("carries no install-time script, and leaves the repository's manifest as it was", () => {
    // npm 11 warns on `npm i -g` of a package with any of them, and asks for --allow-scripts.
    const scripts = Object.keys((JSON.parse(NodeFs.readFileSync(NodePath.join(installed, "package.json"), "utf8")) as { scripts?: object }).scripts ?? {})
    for (const name of ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"]) expect(scripts).not.toContain(name)
    // A clone's `npm ci` still builds dist/ and patches TypeScript.
    expect(NodeFs.readFileSync("package.json", "utf8")).toBe(manifestBefore)
    expect(Object.keys((JSON.parse(manifestBefore) as { scripts: object }).scripts)).toContain("prepare")
    expect(NodeFs.existsSync("package.json.unpacked")).toBe(false)
  })

  const run = (args: ReadonlyArray<string>) => {
    const dir = tempDirSync()
    return spawnSync(NodePath.join(prefix, "bin", "magi"), args, {
      cwd: dir,
      encoding: "utf8",
      env: {
        PATH: `${NodePath.join(prefix, "bin")}:${NodePath.dirname(process.execPath)}:/usr/bin:/bin`,
        HOME: dir,
        XDG_CONFIG_HOME: NodePath.join(dir, "config"),
        MAGI_HOME: NodePath.join(dir, "home")
      }
    })
  }

  it("answers --version", () => {
    const version = run(["--version"])
    expect(version.status).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it("runs magi doctor with no repository, checking the home it makes", () => {
    const doctor = run(["doctor"])
    expect(doctor.stderr).not.toContain("unexpected failure")
    expect(doctor.stdout).toMatch(/^ok {4}config: no config files found/m)
    expect(doctor.stdout).toMatch(/^(ok|warn) +home /m)
    expect(doctor.stdout).toMatch(/^warn {2}service: /m)
  })

  it("runs magi init --yes with no repository, writing the config and ending with the doctor", () => {
    const init = run(["init", "--yes"])
    expect(init.status).toBe(0)
    expect(init.stdout).toMatch(/config: wrote .*\/config\/magi\/config\.toml\n/)
    expect(init.stdout).toMatch(/magi doctor:\nok {4}config: read /)
  })
})
