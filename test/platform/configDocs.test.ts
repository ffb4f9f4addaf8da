/**
 * docs/configuration.md's table of keys against the keys the code reads.
 *
 * The config has no schema to list: each reader looks keys up in the merged
 * TOML table as it needs them. So the keys are found by running the readers
 * on a table that records every lookup. A key is a section (`[ask]`) when
 * giving it a table makes the reader look inside it, and a key otherwise.
 * A key the code starts reading without a row in the docs fails here, and so
 * does a row for a key nothing reads.
 */
import { describe, expect, it, vi } from "vitest"
import { defaults as graphDefaults, settingsOf as graphSettingsOf } from "../../src/graph/GraphConfig.js"
import { settingsOf as verifySettingsOf } from "../../src/verify/VerifyConfig.js"
import { settingsOf as forgeSettingsOf } from "../../src/land/ForgeConfig.js"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

// The planning chat reads `[roles] chatter` through `loadTable`, inside a
// function it does not export: hand it the recording table instead of files.
const table = vi.hoisted(() => ({ current: {} as Record<string, unknown> }))
vi.mock("../../src/platform/MagiConfig.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/platform/MagiConfig.js")>()
  return { ...original, loadTable: () => Effect.succeed({ table: table.current, files: [] }) }
})

import { settingsOf } from "../../src/platform/MagiConfig.js"
import { fromTable, Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { interviewerFor } from "../../src/chat/Chats.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"

type Reader = (root: Record<string, unknown>) => Effect.Effect<unknown, unknown>

/** Names JavaScript itself looks up on any object. */
const LANGUAGE = new Set(["toJSON", "toString", "valueOf", "constructor", "then", "toLocaleString", "hasOwnProperty"])

/**
 * A table that records each key looked up in it, as a dotted path. The keys
 * in `sections` answer with tables of their own; `given` answers fixed
 * values (a section of the form `[agents.<id>]` needs an entry to be read).
 */
const recording = (prefix: string, sections: ReadonlySet<string>, given: ReadonlyMap<string, unknown>, reads: Set<string>): Record<string, unknown> => {
  const valueOf = (path: string): unknown => given.has(path) ? given.get(path) : sections.has(path) ? recording(`${path}.`, sections, given, reads) : undefined
  return new Proxy({} as Record<string, unknown>, {
    get: (_, key) => {
      if (typeof key !== "string") return undefined
      // JavaScript's own lookups (`JSON.stringify` in an error message asks
      // for toJSON, a string conversion for toString) are no config keys.
      if (LANGUAGE.has(key)) return Object.prototype[key as keyof object]
      reads.add(prefix + key)
      return valueOf(prefix + key)
    },
    has: (_, key) => {
      if (typeof key !== "string") return false
      reads.add(prefix + key)
      return valueOf(prefix + key) !== undefined
    },
    getOwnPropertyDescriptor: (_, key) => {
      if (typeof key !== "string") return undefined
      reads.add(prefix + key)
      const value = valueOf(prefix + key)
      return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: true }
    },
    ownKeys: () => []
  })
}

/** The paths `read` looks up, given `sections` as tables; whether it fails does not matter. */
const probe = async (read: Reader, sections: ReadonlySet<string>, given: ReadonlyMap<string, unknown>) => {
  const reads = new Set<string>()
  await Effect.runPromiseExit(Effect.suspend(() => read(recording("", sections, given, reads))))
  return reads
}

/** Every key `read` reads, as a dotted path (`ask.wait_slice`), sections left out. */
const keysReadBy = async (read: Reader, given: ReadonlyMap<string, unknown> = new Map()) => {
  const sections = new Set<string>()
  const leaves = new Set<string>()
  for (;;) {
    const reads = await probe(read, sections, given)
    const untried = [...reads].filter((p) => !sections.has(p) && !leaves.has(p) && !given.has(p))
    if (untried.length === 0) return [...reads].filter((p) => !sections.has(p) && !given.has(p))
    for (const path of untried) {
      const asTable = await probe(read, new Set([...sections, path]), given)
      if ([...asTable].some((p) => p.startsWith(`${path}.`))) sections.add(path)
      else leaves.add(path)
    }
  }
}

const claude: AgentSpec = { id: "claude", kind: "claude", command: ["claude"], model: null, args: [], env: {} }

/** `[agents.<id>]`: one entry, of a kind that needs nothing else, so every key of it is read. */
const oneAgent = (reads: Set<string>) =>
  new Map<string, unknown>([["agents", { "<id>": recording("agents.<id>.", new Set(), new Map([["agents.<id>.kind", "claude"]]), reads) }]])

/**
 * Every module that reads the config table, and how to run it here. A new
 * reader must be added, or the guard below fails: keys it reads would
 * otherwise go unnoticed.
 */
const READERS = {
  "src/platform/MagiConfig.ts": async (): Promise<string[]> => {
    // `[approvals.agents.<id>]` and `[approvals.repos."<path>"]`: one entry each, so their keys are read.
    const reads = new Set<string>()
    const scoped = (table: string, name: string) => ({ [name]: recording(`${table}.${name}.`, new Set(), new Map(), reads) })
    const given = new Map<string, unknown>([
      ["approvals.agents", scoped("approvals.agents", "<id>")],
      ["approvals.repos", scoped("approvals.repos", "<path>")]
    ])
    const root = await keysReadBy((r) => settingsOf(r, []), given)
    return [...root, ...reads]
  },
  "src/agents/AgentRoster.ts": async (): Promise<string[]> => {
    const reads = new Set<string>()
    const root = await keysReadBy((r) => fromTable(r, []), oneAgent(reads))
    return [...root, ...[...reads].filter((p) => p !== "agents.<id>")]
  },
  "src/graph/GraphConfig.ts": (): Promise<string[]> => keysReadBy((r) => graphSettingsOf(r, [])),
  "src/verify/VerifyConfig.ts": (): Promise<string[]> => keysReadBy((r) => verifySettingsOf(r, [])),
  "src/land/ForgeConfig.ts": (): Promise<string[]> => keysReadBy((r) => forgeSettingsOf(r, [])),
  "src/chat/Chats.ts": (): Promise<string[]> =>
    keysReadBy((root) =>
      Effect.suspend(() => {
        table.current = root
        // The real `loadTable` needs a file system; the stand-in above touches none.
        return interviewerFor("/repo", null).pipe(Effect.provide(Layer.merge(Rosters.fixed([claude]), MemoryFileSystem.layer)))
      })
    )
}

/** Documented keys the code does not read yet: none. */
const PENDING = new Set<string>()

/** The first column of the table under `## Keys` in docs/configuration.md. */
const documentedKeys = (): string[] => {
  const text = NodeFs.readFileSync("docs/configuration.md", "utf8")
  const section = text.split(/^## /m).find((s) => s.startsWith("Keys\n"))
  expect(section, "docs/configuration.md has a `## Keys` section").toBeDefined()
  return section!
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => /^\| `([^`]+)`/.exec(line)![1]!)
}

const codeKeys = async (): Promise<string[]> => {
  const all = new Set<string>()
  for (const read of Object.values(READERS)) for (const key of await read()) all.add(key)
  return [...all].sort()
}

describe("docs/configuration.md", () => {
  it("finds the keys the code reads (the recording table works)", async () => {
    const keys = await codeKeys()
    expect(keys).toEqual(expect.arrayContaining(["ask.wait_slice", "notify.command", "roles.chatter", "agents.<id>.command"]))
    expect(keys).not.toContain("ask")
    expect(keys).not.toContain("agents")
  })

  it("has a row for every key the code reads", async () => {
    const documented = new Set(documentedKeys())
    expect((await codeKeys()).filter((k) => !documented.has(k)), "keys read by the code with no row in docs/configuration.md").toEqual([])
  })

  it("has no row for a key nothing reads", async () => {
    const read = new Set(await codeKeys())
    expect(documentedKeys().filter((k) => !read.has(k) && !PENDING.has(k)), "rows in docs/configuration.md for keys no code reads").toEqual([])
  })

  it("gives the competition's numeric defaults as the code has them", async () => {
    const text = NodeFs.readFileSync("docs/configuration.md", "utf8")
    const documented = (key: string) => new RegExp(`^\\| \`${key.replace(".", "\\.")}\` \\| \`([^\`]+)\``, "m").exec(text)?.[1]
    const read = await Effect.runPromise(graphSettingsOf({}, []))
    expect(read).toEqual(graphDefaults)
    expect({ judges: documented("graph.judges"), deliberate_rounds: documented("graph.deliberate_rounds") }).toEqual({
      judges: String(graphDefaults.judges),
      deliberate_rounds: String(graphDefaults.deliberateRounds)
    })
  })

  it("knows every module that reads the config table", () => {
    const readers: string[] = []
    const walk = (dir: string) => {
      for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
        const path = NodePath.join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (path.endsWith(".ts") && /\b(loadTable|settingsOf)\b/.test(NodeFs.readFileSync(path, "utf8"))) readers.push(path)
      }
    }
    walk("src")
    expect(readers.sort(), "a module reading the config table: add it to READERS").toEqual(Object.keys(READERS).sort())
  })
})
