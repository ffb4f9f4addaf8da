/**
 * Vitest global setup: one real PostgreSQL server for the whole run
 * (`scripts/pg/server.mjs`: initdb into a temp folder, 127.0.0.1 on a free
 * port), stopped at the end. Test files reach it through `inject("pgUrl")`
 * and make a database of their own (`test/pgSupport.ts`). A machine without
 * PostgreSQL gets `pgError` instead, and every test that needs the server
 * fails saying how to install it: a missing database never skips.
 */
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL server, as a superuser URL; empty when it could not start. */
    pgUrl: string
    /** Why it could not start. */
    pgError: string
  }
}

export default async function setup(project: TestProject) {
  // @ts-expect-error: a plain .mjs script without types
  const { startServer } = (await import("../scripts/pg/server.mjs")) as {
    startServer: () => Promise<{ url: string; stop: () => void }>
  }
  try {
    const server = await startServer()
    // A run cut short (a timeout's SIGTERM) skips the teardown: the server
    // is stopped on the way out all the same (stop is synchronous and runs
    // once).
    process.once("exit", () => server.stop())
    // Provided, not put in the environment: every process a test starts
    // (an agent's, above all) would inherit it.
    project.provide("pgUrl", server.url)
    project.provide("pgError", "")
    return () => server.stop()
  } catch (e) {
    project.provide("pgUrl", "")
    project.provide("pgError", e instanceof Error ? e.message : String(e))
    return undefined
  }
}
