/**
 * The launcher's code cache (scripts/launcher.cjs) and the PostgreSQL
 * driver: the build's cache is made by `magi --help`, which never loads the
 * driver, so the first command on a database writes the cache once more,
 * with the driver in it, and says so beside it; a home-folder command never
 * does. Run on a copy of the build, so the cache every other test's
 * processes share is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { freshDatabaseSync } from "../pgSupport.js"

let db: { readonly url: string; readonly drop: () => Promise<void> }
let top: string
beforeAll(async () => {
  db = await freshDatabaseSync()
  top = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-launcher-"))
})
afterAll(async () => {
  await db.drop()
  NodeFs.rmSync(top, { recursive: true, force: true })
})

describe("the launcher's code cache", { timeout: 120_000 }, () => {
  it("is written once more by the first command on PostgreSQL, with the driver, and never by a home-folder one", () => {
    const dist = NodePath.join(top, "dist")
    NodeFs.cpSync(NodePath.resolve("dist"), dist, { recursive: true })
    NodeFs.rmSync(NodePath.join(dist, "magi.cjs.cache"), { force: true })
    NodeFs.rmSync(NodePath.join(dist, "magi.cjs.cache.driver"), { force: true })
    const cache = NodePath.join(dist, "magi.cjs.cache")
    const driver = `${cache}.driver`
    const magi = (args: Array<string>, env: Record<string, string> = {}) => {
      const r = spawnSync(process.execPath, [NodePath.join(dist, "magi.js"), ...args], {
        cwd: top,
        env: { PATH: process.env.PATH, HOME: top, MAGI_HOME: NodePath.join(top, "home"), XDG_CONFIG_HOME: NodePath.join(top, "config"), ...env },
        encoding: "utf8"
      })
      expect(r.status, r.stderr).toBe(0)
    }
    const written = () => NodeFs.statSync(cache).mtimeMs

    // As the build leaves it: made by a command that never used the database.
    magi(["--help"])
    expect(NodeFs.existsSync(driver)).toBe(false)
    const built = written()
    magi(["answer", "--list"])
    expect(written()).toBe(built)
    expect(NodeFs.existsSync(driver)).toBe(false)

    magi(["answer", "--list"], { MAGI_STORE_URL: db.url })
    expect(NodeFs.existsSync(driver)).toBe(true)
    const withDriver = written()
    expect(withDriver).toBeGreaterThan(built)

    // Once: the next commands, on either store, start from it and leave it.
    magi(["answer", "--list"], { MAGI_STORE_URL: db.url })
    magi(["answer", "--list"])
    expect(written()).toBe(withDriver)
  })
})
