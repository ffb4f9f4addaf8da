#!/usr/bin/env node
// Installs the pinned real agent CLIs (scripts/agents/pins.json) outside
// node_modules, into a cache folder reused between runs: they weigh about a
// gigabyte together, and the project's own `npm ci` must not pay for them.
//
//   node scripts/agents/install.mjs [claude|codex|opencode ...]
//
// Prints one line per CLI: `<name> <version> <absolute path of its bin>`.
// The cache is `$MAGI_AGENTS_CACHE`, else `$XDG_CACHE_HOME/magi-agents`, else
// `~/.cache/magi-agents`; each pin gets `<name>@<version>/`, so a bumped pin
// is a fresh install and an old one is left for the next cleanup.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
export const pins = JSON.parse(readFileSync(join(here, "pins.json"), "utf8"))
delete pins["//"]

export const cacheDir = () =>
  process.env.MAGI_AGENTS_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "magi-agents")

/** Where the pinned CLI `name`'s executable is once installed. */
export const binOf = (name) => {
  const pin = pins[name]
  if (pin === undefined) throw new Error(`no pin for agent CLI "${name}" (pins: ${Object.keys(pins).join(", ")})`)
  return join(cacheDir(), `${name}@${pin.version}`, "node_modules", ".bin", pin.bin)
}

/** Install `name` at its pin unless it already is; returns its bin path. */
export const install = (name) => {
  const bin = binOf(name)
  if (existsSync(bin)) return bin
  const pin = pins[name]
  const dest = join(cacheDir(), `${name}@${pin.version}`)
  // Install into a scratch folder and rename it into place, so an install
  // cut short is never mistaken for a finished one.
  const scratch = `${dest}.partial-${process.pid}`
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  execFileSync(
    "npm",
    ["install", "--prefix", scratch, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${pin.package}@${pin.version}`],
    { stdio: ["ignore", "inherit", "inherit"] }
  )
  rmSync(dest, { recursive: true, force: true })
  renameSync(scratch, dest)
  if (!existsSync(bin)) throw new Error(`${pin.package}@${pin.version} installed, but ${bin} is missing`)
  return bin
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(pins)
  for (const name of names) console.log(`${name} ${pins[name]?.version} ${install(name)}`)
}
