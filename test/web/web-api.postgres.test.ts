/**
 * The HTTP API suite of `web-api.test.ts` once more, with every record in
 * PostgreSQL: `MAGI_STORE_URL` names a fresh database for this file, so the
 * server, the seeding and every process the tests start use it. What only
 * the home folder has (the move of a flat home to month shelves, notices
 * written as files) stays with the file run.
 */
import { afterAll } from "vitest"
import { freshDatabaseSync } from "../pgSupport.js"

const db = await freshDatabaseSync()
process.env["MAGI_STORE_URL"] = db.url
afterAll(async () => {
  delete process.env["MAGI_STORE_URL"]
  await db.drop()
})

await import("./web-api.test.js")
