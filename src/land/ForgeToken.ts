/**
 * Where the forge token comes from: `GH_TOKEN`, then `GITHUB_TOKEN` (what
 * `gh` and Actions read), then `gh auth token` when `gh` is on PATH. Kept
 * `Redacted` from here on, so printing it, logging it or writing it into a
 * record shows `<redacted>`; `source` is what messages name instead.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Duration, Effect, Redacted, Stream } from "effect"
import { ForgeTokenMissing } from "./Forge.js"

export interface ForgeToken {
  readonly token: Redacted.Redacted<string>
  /** `GH_TOKEN`, `GITHUB_TOKEN` or `gh auth token`. */
  readonly source: string
}

export const SOURCES = ["GH_TOKEN", "GITHUB_TOKEN", "gh auth token"] as const

const GH_TIMEOUT = Duration.seconds(10)

/** `gh auth token`'s output, or null when gh is missing, logged out or slow. */
const fromGh = (env: Record<string, string | undefined>): Effect.Effect<string | null, never, CommandExecutor.CommandExecutor> =>
  Effect.gen(function* () {
    const proc = yield* Command.make("gh", "auth", "token").pipe(
      Command.env(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))),
      Command.feed(""),
      Command.start
    )
    // A gh that hangs (a keyring prompt) is killed with the scope, never left behind.
    // fallback: best-effort kill of the token helper
    yield* Effect.addFinalizer(() => proc.kill("SIGKILL").pipe(Effect.ignore))
    const [out, code] = yield* Effect.all([Stream.mkString(Stream.decodeText(proc.stdout)), proc.exitCode], { concurrency: "unbounded" })
    const token = out.trim()
    return code === 0 && token !== "" ? token : null
  }).pipe(
    Effect.scoped,
    Effect.timeout(GH_TIMEOUT),
    // gh missing, logged out or hung all mean the same here: gh gives no token, and the error names every source tried.
    Effect.either,
    Effect.map((r) => (r._tag === "Right" ? r.right : null))
  )

/** The first token found, in the order above. */
export const resolve = (
  env: Record<string, string | undefined>
): Effect.Effect<ForgeToken, ForgeTokenMissing, CommandExecutor.CommandExecutor> =>
  Effect.gen(function* () {
    for (const name of ["GH_TOKEN", "GITHUB_TOKEN"] as const) {
      const value = env[name]?.trim()
      if (value !== undefined && value !== "") return { token: Redacted.make(value), source: name }
    }
    const gh = yield* fromGh(env)
    if (gh !== null) return { token: Redacted.make(gh), source: "gh auth token" }
    return yield* new ForgeTokenMissing({ tried: [...SOURCES] })
  })

/** `text` with every occurrence of the token replaced, for any string that leaves the forge layer. */
export const redact = (token: Redacted.Redacted<string>, text: string): string => {
  const value = Redacted.value(token)
  return value === "" ? text : text.split(value).join("<token>")
}
