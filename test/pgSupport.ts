/**
 * A database of one test's own on the run's PostgreSQL server
 * (`test/pgServer.ts`), dropped when the test's scope closes. Never a mock:
 * the contract tests and the end-to-end ones talk to the real server.
 */
import { Effect } from "effect"
import Pg from "pg"
import { inject } from "vitest"

/** The server's URL; fails the test (never skips it) when the run has no server. */
export const serverUrl = (): string => {
  const url = inject("pgUrl")
  if (url === undefined || url === "")
    throw new Error(`no PostgreSQL server for the tests: ${inject("pgError") || "the global setup (test/pgServer.ts) did not run"}`)
  return url
}

export const databaseUrl = (database: string): string => {
  const u = new URL(serverUrl())
  u.pathname = `/${database}`
  return u.toString()
}

const admin = async <A>(body: (client: Pg.Client) => Promise<A>): Promise<A> => {
  const client = new Pg.Client({ connectionString: serverUrl() })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

let made = 0

/** A new, empty database; its URL. Dropped (with whatever still holds it) at the end of the scope. */
export const freshDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const name = `magi_t_${process.pid}_${Date.now().toString(36)}_${made++}`
    await admin((c) => c.query(`CREATE DATABASE ${name}`))
    return { name, url: databaseUrl(name) }
  }),
  ({ name }) => Effect.promise(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined))
)

/** The same, outside Effect (for end-to-end tests that spawn processes). */
export const freshDatabaseSync = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `magi_t_${process.pid}_${Date.now().toString(36)}_${made++}`
  await admin((c) => c.query(`CREATE DATABASE ${name}`))
  return {
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined, () => undefined)
  }
}

/** Run one statement against a database directly (to plant a row a newer magi wrote, say). */
export const query = (url: string, text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.promise(async () => {
    const client = new Pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query(text, [...values])).rows
    } finally {
      await client.end()
    }
  })
