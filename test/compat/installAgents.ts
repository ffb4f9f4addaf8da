/**
 * Vitest global setup: makes sure the pinned real agent CLIs are installed
 * (scripts/agents/install.mjs; a no-op once cached) and tells the
 * compatibility tests where they are through `MAGI_COMPAT_<NAME>` variables.
 * A CLI that cannot be installed (no network) is reported through
 * `MAGI_COMPAT_<NAME>_ERROR`, so its tests fail saying why and the rest of
 * the suite still runs.
 */
export default async function setup() {
  // @ts-expect-error: a plain .mjs script without types
  const { install, pins } = (await import("../../scripts/agents/install.mjs")) as {
    install: (name: string) => string
    pins: Record<string, unknown>
  }
  for (const name of Object.keys(pins)) {
    const key = `MAGI_COMPAT_${name.toUpperCase()}`
    try {
      process.env[key] = install(name)
    } catch (e) {
      process.env[`${key}_ERROR`] = `could not install the pinned ${name}: ${e instanceof Error ? e.message : String(e)}`
    }
  }
}
