/**
 * Vitest global setup: one real PostgreSQL server for the whole run
 * (`scripts/pg/server.mjs`: initdb into a temp folder, 127.0.0.1 on a free
 * port), stopped at the end. Test files reach it through `MAGI_TEST_PG_URL`
 * and make a database of their own (`test/pgSupport.ts`). A machine without
 * PostgreSQL gets `MAGI_TEST_PG_ERROR` instead, and every test that needs the
 * server fails saying how to install it: a missing database never skips.
 */
export default async function setup() {
  // @ts-expect-error: a plain .mjs script without types
  const { startServer } = (await import("../scripts/pg/server.mjs")) as {
    startServer: () => Promise<{ url: string; stop: () => void }>
  }
  try {
    const server = await startServer()
    process.env.MAGI_TEST_PG_URL = server.url
    return () => server.stop()
  } catch (e) {
    process.env.MAGI_TEST_PG_ERROR = e instanceof Error ? e.message : String(e)
    return undefined
  }
}
