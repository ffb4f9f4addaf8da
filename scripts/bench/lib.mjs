// Shared bits for the benchmarks: an isolated magi home and process helpers.
import { spawn } from "node:child_process"
import { mkdtempSync, mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export const MAGI = resolve("dist/magi.js")

export const isolatedEnv = () => {
  const top = mkdtempSync(join(tmpdir(), "magi-bench-"))
  mkdirSync(join(top, "work"))
  return {
    top,
    cwd: join(top, "work"),
    home: join(top, "home"),
    env: { PATH: process.env.PATH, HOME: top, MAGI_HOME: join(top, "home"), XDG_CONFIG_HOME: join(top, "config") }
  }
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export const run = (cmd, args, opts = {}) =>
  new Promise((done) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts })
    let out = ""
    child.stdout.on("data", (c) => (out += c))
    child.on("close", (code) => done({ code, out }))
  })

export const ms = (n) => `${n.toFixed(1)} ms`
