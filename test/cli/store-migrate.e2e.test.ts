/**
 * `magi store migrate` as real processes, against the real PostgreSQL the
 * test run starts: a home's records into a database and back, run twice,
 * killed with -9 midway and run again, and a bad URL named with its
 * password masked.
 */
import { afterAll, describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { owner } from "./cliSupport.js"
import { freshDatabaseSync, query } from "../pgSupport.js"
// @ts-expect-error: a plain .mjs script without types
import { questionRecord as questionRecordUntyped } from "../../scripts/bench/questions.mjs"

/** The benches' question generator (one shape of stored question for both). */
const questionRecord = questionRecordUntyped as (at: Date, n: number, options: { open?: boolean; panel?: boolean }) => Record<string, unknown> & { id: string }

const databases: Array<{ readonly drop: () => Promise<void> }> = []
const database = async () => {
  const db = await freshDatabaseSync()
  databases.push(db)
  return db.url
}
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()))
})

const rows = (url: string, text: string, values: ReadonlyArray<unknown> = []) => Effect.runPromise(query(url, text, values))

const question = (at: Date, n: number, open: boolean, panel: boolean) => questionRecord(at, n, { open, panel })

/**
 * Questions as a home holds them after months of use: `shelved` settled
 * ones on month shelves (`questions/history/<YYYY-MM>/`), two hot ones (one
 * open, one just answered), and a panel beside the first shelved and the
 * open one. Their ids, the shelved first.
 */
const plantQuestions = (home: string, shelved: number) => {
  const root = NodePath.join(home, "questions")
  const place = (dir: string, q: ReturnType<typeof question>) => {
    NodeFs.mkdirSync(dir, { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
    if (q.panel) {
      NodeFs.mkdirSync(NodePath.join(dir, `${q.id}.panel`))
      NodeFs.writeFileSync(NodePath.join(dir, `${q.id}.panel`, "index.html"), `<h1>${q.summary}</h1><img src="chart.svg">`)
      NodeFs.writeFileSync(NodePath.join(dir, `${q.id}.panel`, "chart.svg"), Buffer.from([0x3c, 0x73, 0x76, 0x67, 0x00, 0xff, 0x3e]))
    }
  }
  const ids: Array<string> = []
  for (let n = 0; n < shelved; n++) {
    // Three months, a question every few minutes.
    const q = question(new Date(2025, n % 3, 2, 8, 0, 0, 0 + (n / 3) * 200_000), n, false, n === 0)
    place(NodePath.join(root, "history", `${q.id.slice(0, 4)}-${q.id.slice(4, 6)}`), q)
    ids.push(q.id)
  }
  const answered = question(new Date(2026, 0, 5, 9), shelved, false, false)
  const open = question(new Date(2026, 0, 6, 9), shelved + 1, true, true)
  place(root, answered)
  place(root, open)
  return [...ids, answered.id, open.id]
}

/** A task filed the way the owner files one, in a repository of the owner's. */
const fileTask = async (o: ReturnType<typeof owner>) => {
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: o.cwd })
  const added = await o.run(["task", "add", "Add a cache in front of the store"])
  expect(added.code).toBe(0)
  return NodeFs.readdirSync(NodePath.join(o.home, "queue")).filter((n) => n.endsWith(".json"))
}

/** The checksum lines of a migration's result, by kind. */
const checksums = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^(\S+): .*source (.*sha256:[0-9a-f]{16})/gm)].map((m) => [m[1], m[2]]))

/** Everything in the database, as one fingerprint (rows, files and revisions). */
const fingerprint = async (url: string) => {
  const [r] = await rows(
    url,
    `SELECT (SELECT md5(string_agg(kind || '/' || id || '/' || coalesce(shelf, '') || '/' || body, ',' ORDER BY kind, id)) FROM magi_records) AS records,
            (SELECT md5(string_agg(kind || '/' || owner || '/' || name || '/' || md5(bytes), ',' ORDER BY kind, owner, name)) FROM magi_files) AS files,
            (SELECT string_agg(kind || '=' || revision, ',' ORDER BY kind) FROM magi_revisions) AS revisions`
  )
  return r
}

describe("magi store migrate, as real processes", { timeout: 180_000 }, () => {
  it("copies a home's questions, hot and shelved with their panels, and its tasks into PostgreSQL, where magi answer reads every one", async () => {
    const o = owner()
    const ids = plantQuestions(o.home, 30)
    const tasks = await fileTask(o)
    const url = await database()

    const migrated = await o.run(["store", "migrate", "--to", url])
    expect(migrated.stderr).toContain("magi: copying the records from the home folder")
    expect(migrated.code).toBe(0)
    expect(migrated.stdout).toContain("questions: 32 read, 32 copied, 0 already there; source 32 records + 4 files")
    expect(migrated.stdout).toContain("queue: 1 read, 1 copied")
    expect(migrated.stdout).toMatch(/\n0 differences\n$/)

    // Another machine with only the database in common sees all of them.
    const phone = owner()
    const store = { MAGI_STORE_URL: url }
    const listed = await phone.run(["answer", "--list", "--all", "--json"], store)
    expect(listed.code).toBe(0)
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((q) => q.id).sort()).toEqual([...ids].sort())
    const open = await phone.run(["answer", "--list"], store)
    expect(open.stdout).toContain("Which storage backend should cache 31 use?")
    for (const id of [ids[0]!, ids[17]!, ids.at(-1)!]) {
      const shown = await phone.run(["answer", id], store)
      expect(shown.code).toBe(0)
      expect(shown.stdout).toContain(id)
    }
    // Shelved where they were, the panel's bytes as they were, the task's record as it was.
    const [shelf] = await rows(url, "SELECT shelf, digest FROM magi_records WHERE kind = 'questions' AND id = $1", [ids[0]])
    expect(shelf).toMatchObject({ shelf: `${ids[0]!.slice(0, 4)}-${ids[0]!.slice(4, 6)}` })
    expect(String(shelf!.digest)).toContain("cache 0")
    const chart = await rows(url, "SELECT bytes FROM magi_files WHERE kind = 'questions' AND owner = $1 AND name = 'chart.svg'", [ids[0]])
    expect([...(chart[0]!.bytes as Buffer)]).toEqual([0x3c, 0x73, 0x76, 0x67, 0x00, 0xff, 0x3e])
    const [task] = await rows(url, "SELECT body FROM magi_records WHERE kind = 'queue'")
    expect(task!.body).toBe(NodeFs.readFileSync(NodePath.join(o.home, "queue", tasks[0]!), "utf8"))
  })

  it("copies nothing and changes nothing when run again, and says the same checksums", async () => {
    const o = owner()
    plantQuestions(o.home, 12)
    const url = await database()
    const first = await o.run(["store", "migrate", "--to", url])
    expect(first.code).toBe(0)
    const before = await fingerprint(url)

    const again = await o.run(["store", "migrate", "--to", url])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("questions: 14 read, 0 copied, 14 already there")
    expect(again.stdout).toContain("0 differences")
    expect(checksums(again.stdout)).toEqual(checksums(first.stdout))
    expect(await fingerprint(url)).toEqual(before)
  })

  it("once the target was used (a listing shelved its settled questions), a second run has nothing left to copy and exits 0", async () => {
    const o = owner()
    const ids = plantQuestions(o.home, 3)
    const url = await database()
    const first = await o.run(["store", "migrate", "--to", url])
    expect(first.code).toBe(0)
    const read = /questions: (\d+) read/.exec(first.stdout)![1]!
    // The database in use: its shelving moves the settled hot question (the
    // one answered) to its month's shelf there, as a listing does.
    const answered = ids.at(-2)!
    await rows(url, "UPDATE magi_records SET shelf = $2 WHERE kind = 'questions' AND id = $1", [answered, `${answered.slice(0, 4)}-${answered.slice(4, 6)}`])
    const again = await o.run(["store", "migrate", "--to", url])
    expect(again.stderr).not.toContain("differ")
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(`questions: ${read} read, 0 copied, ${read} already there`)
    expect(again.stdout).toContain("0 differences")
  })

  it("names the records that differ, kind and id, when the target holds something else", async () => {
    const o = owner()
    const ids = plantQuestions(o.home, 3)
    const url = await database()
    expect((await o.run(["store", "migrate", "--to", url])).code).toBe(0)
    await rows(url, "UPDATE magi_records SET body = replace(body, 'cache', 'kache') WHERE kind = 'questions' AND id = $1", [ids[1]])
    const again = await o.run(["store", "migrate", "--to", url])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`questions ${ids[1]}`)
    expect(again.stderr).not.toContain(ids[0]!)
  })

  it("finishes the job when run again after a kill -9 midway, with the checksums of a copy never interrupted", async () => {
    const o = owner()
    const ids = plantQuestions(o.home, 12_000)
    const url = await database()
    const copying = o.start(["store", "migrate", "--to", url])
    await o.until(() => /questions: [\d,]+ read, [1-9][\d,]* copied/.test(copying.stderr()), "the first progress line", 60_000)
    copying.child.kill("SIGKILL")
    const killed = await copying.done
    expect(killed.signal).toBe("SIGKILL")
    const [partial] = await rows(url, "SELECT count(*)::int AS n FROM magi_records WHERE kind = 'questions'")
    expect(partial!.n).toBeGreaterThan(0)
    expect(partial!.n).toBeLessThan(ids.length)

    const rerun = await o.run(["store", "migrate", "--to", url])
    expect(rerun.code).toBe(0)
    expect(rerun.stdout).toContain(`questions: 12,002 read, ${(ids.length - partial!.n).toLocaleString("en-US")} copied`)
    expect(rerun.stdout).toContain("0 differences")

    // The same home copied in one go into another database says the same.
    const untouched = await database()
    const once = await o.run(["store", "migrate", "--to", untouched])
    expect(checksums(rerun.stdout)).toEqual(checksums(once.stdout))
    expect(await fingerprint(url)).toMatchObject({ records: (await fingerprint(untouched))!.records, files: (await fingerprint(untouched))!.files })
  })

  it("copies from the configured database back to a home folder, panels and all, and the checksums match", async () => {
    const o = owner()
    const ids = plantQuestions(o.home, 20)
    await fileTask(o)
    const url = await database()
    const there = await o.run(["store", "migrate", "--to", url])
    expect(there.code).toBe(0)

    const elsewhere = owner()
    const back = await elsewhere.run(["store", "migrate", "--to", NodePath.join(elsewhere.top, "restored")], { MAGI_STORE_URL: url })
    expect(back.stderr).toContain("from PostgreSQL at postgres://magi_test:***@")
    expect(back.code).toBe(0)
    expect(back.stdout).toContain("0 differences")
    expect(checksums(back.stdout)).toEqual(checksums(there.stdout))

    // The restored folder is a home like the first: same files, read by magi with no database.
    const restored = NodePath.join(elsewhere.top, "restored")
    const shelved = NodePath.join("questions", "history", `${ids[0]!.slice(0, 4)}-${ids[0]!.slice(4, 6)}`)
    for (
      const file of [
        NodePath.join(shelved, `${ids[0]}.json`),
        NodePath.join(shelved, `${ids[0]}.panel`, "chart.svg"),
        NodePath.join("questions", `${ids.at(-1)}.panel`, "index.html")
      ]
    )
      expect(NodeFs.readFileSync(NodePath.join(restored, file))).toEqual(NodeFs.readFileSync(NodePath.join(o.home, file)))
    const listed = await elsewhere.run(["answer", "--list", "--all", "--json"], { MAGI_HOME: restored })
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((q) => q.id).sort()).toEqual([...ids].sort())

    // And back again is a no-op.
    const twice = await elsewhere.run(["store", "migrate", "--to", restored], { MAGI_STORE_URL: url })
    expect(twice.stdout).toContain("questions: 22 read, 0 copied, 22 already there")
  })

  it("names a database it cannot reach with the password masked, and exits 1 having copied nothing", async () => {
    const o = owner()
    plantQuestions(o.home, 2)
    const unreachable = await o.run(["store", "migrate", "--to", "postgres://magi:s3cret-word@127.0.0.1:9/magi"])
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toContain("postgres://magi:***@127.0.0.1:9/magi")
    expect(unreachable.stderr + unreachable.stdout).not.toContain("s3cret-word")

    const foreign = await o.run(["store", "migrate", "--to", "mysql://root:hunter2@db/magi"])
    expect(foreign.code).toBe(1)
    expect(foreign.stderr).toContain("is not a PostgreSQL URL")
    expect(foreign.stderr + foreign.stdout).not.toContain("hunter2")

    const fromNowhere = await o.run(["store", "migrate", "--to", NodePath.join(o.top, "copy")], {
      MAGI_STORE_URL: "postgres://magi:s3cret-word@127.0.0.1:9/magi"
    })
    expect(fromNowhere.code).toBe(1)
    expect(fromNowhere.stderr).toContain("postgres://magi:***@127.0.0.1:9/magi")
    expect(fromNowhere.stderr).not.toContain("s3cret-word")
  })
})
