/**
 * How the last notification attempt from this home went: when, and ok or
 * the one-line reason it failed. `magi doctor` reads it, so right after a
 * publish that failed (`magi init`'s test question, an ask) it warns instead
 * of reporting the channel "ok" because it is configured.
 *
 * One small file in the home (`notify-last.json`, 0600), replaced whole by
 * each attempt: no read-modify-write, so concurrent publishers cannot tear
 * it, and the last one to finish is the one doctor reports. The reason is
 * scrubbed of the ntfy topic and token first (the topic is the secret of an
 * ntfy channel), so the record holds no secret.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Option, Schema } from "effect"
import * as Clock from "effect/Clock"
import * as NodePath from "node:path"
import { writeAtomically } from "../store/files/AtomicFile.js"

export const FILE = "notify-last.json"

export const pathIn = (home: string) => NodePath.join(home, FILE)

export const LastNotification = Schema.Struct({
  /** Epoch milliseconds of the attempt's end. */
  at: Schema.Number,
  ok: Schema.Boolean,
  /** The failure's first line, secrets removed; "" when it went out. */
  error: Schema.String
})
export type LastNotification = typeof LastNotification.Type

const decode = Schema.decodeUnknownEither(Schema.parseJson(LastNotification))

/** The reason on one line, bounded, with every secret (topic, token) replaced by a word saying what it was. */
export const scrub = (reason: string, secrets: ReadonlyArray<{ readonly value: string; readonly as: string }>): string => {
  let line = reason.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "no reason given"
  for (const { as, value } of secrets) if (value.length > 0) line = line.split(value).join(as)
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}

/**
 * Write the outcome of an attempt. A home that cannot be written to loses
 * only this hint (logged): the notification itself already happened or not.
 */
export const record = (home: string, outcome: Either.Either<void, string>) =>
  Effect.gen(function* () {
    const at = yield* Clock.currentTimeMillis
    const body: LastNotification = Either.match(outcome, {
      onLeft: (error) => ({ at, ok: false, error }),
      onRight: () => ({ at, ok: true, error: "" })
    })
    yield* writeAtomically(pathIn(home), JSON.stringify(body) + "\n", { mode: 0o600 })
    // display: the last notification's outcome is a hint for magi doctor
  }).pipe(Effect.catchAll((e) => Effect.logDebug(`could not record the last notification's outcome in ${home}: ${e.message}`)))

/**
 * The last attempt, none when nothing was ever sent from this home. A file
 * that cannot be read or parsed is an error for the caller to say, not
 * "nothing there".
 */
export const read = (home: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = pathIn(home)
    if (!(yield* fs.exists(path))) return Option.none<LastNotification>()
    const text = yield* fs.readFileString(path)
    const parsed = decode(text)
    if (Either.isLeft(parsed)) return yield* Effect.fail(`${path} is not a notification record; delete it, and the next notification writes a new one`)
    return Option.some(parsed.right)
  }).pipe(Effect.mapError((e) => (typeof e === "string" ? e : `could not read ${pathIn(home)}: ${e.message}`)))

/** "HH:MM" of `at` in the machine's time zone: what the owner's clock showed. */
export const clockTime = (at: number): string => {
  const d = new Date(at)
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`
}

/** The doctor's words for a failed last attempt. */
export const failedLine = (last: LastNotification): string => `the last notification, at ${clockTime(last.at)}, failed: ${last.error}`
