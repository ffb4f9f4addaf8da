/**
 * `magi say` and the run page's box: the owner's words to a seat, written
 * into the run's record before anything answers (`Said.ts` holds the
 * rules). Nothing here starts a turn: the loop on the run's host does
 * (`daemon/SaidLoop.ts`), at once for a seat at rest, or when the turn in
 * flight ends; a run of another host is carried there by the shared store.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Option, Schema } from "effect"
import { defaultHostName, MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { IMPL_SEAT } from "./NewRun.js"
import { makeSeatLocks } from "./RunTurns.js"
import { RunStore, runsHere, type Run } from "./Runs.js"
import * as Said from "./Said.js"
import * as NodePath from "node:path"
import * as ImageAssets from "../platform/ImageAssets.js"
import { validAssetName } from "../platform/ImageType.js"

/** The word was refused: `why` says what to do instead. */
export class SayRefused extends Schema.TaggedError<SayRefused>()("SayRefused", { run: Schema.String, why: Schema.String }) {
  override get message() {
    return this.why
  }
}

/** What became of a word: its number, its seat, and a line saying when it reaches the agent. */
export interface SayOutcome {
  readonly run: string
  readonly word: Said.SaidWord
  readonly line: string
}

const refused = (run: string, why: string) => new SayRefused({ run, why })

/** The run named by an id the owner typed or a page sent: untrusted, so only an id's characters. */
const theRun = (wanted: string) =>
  Effect.gen(function* () {
    if (!Said.safePart(wanted)) return yield* refused(wanted, `${JSON.stringify(wanted.slice(0, 80))} is not a run id (magi runs lists them)`)
    return yield* (yield* RunStore).get(wanted).pipe(Effect.mapError((e) => refused(wanted, e.message)))
  })

/** When the word reaches the agent, in words. */
const when = (run: Run, seat: string, busy: boolean, self: string) => {
  if (!runsHere(run, self)) return `run ${Q.shortId(run.id)} lives on host ${run.host}: that host's loop gives it to the seat`
  if (busy || !Said.atRest(run.status)) return `seat ${seat}'s turn is running; it is queued, and given to the seat when that turn ends`
  return `the loop (magi serve, or magi web) resumes seat ${seat} with it now`
}

/** Queue `text` for `seat` (the implementing seat when none is named) of run `wanted`. */
export const say = Effect.fn("SayToSeat.say")(function* (wanted: string, seat: Option.Option<string>, text: string, images: ReadonlyArray<string> = []) {
  const runs = yield* RunStore
  const fs = yield* FileSystem.FileSystem
  const self = Option.match(yield* Effect.serviceOption(MagiConfig), { onNone: defaultHostName, onSome: (c) => c.hostName })
  const found = yield* theRun(wanted)
  // Attached images are the run's own assets, named as the upload named them: nothing else is read.
  for (const name of images)
    // fallback: an image that cannot be looked at is refused like a missing one
    if (!validAssetName(name) || !(yield* fs.exists(NodePath.join(runs.dir(found.id), Said.IMAGES_DIR, name)).pipe(Effect.orElseSucceed(() => false))))
      return yield* refused(found.id, `${JSON.stringify(name.slice(0, 80))} is not an image uploaded to run ${Q.shortId(found.id)}; upload it first`)
  // A competition has no `impl` seat: its first candidate is the default.
  const key = Option.getOrElse(seat, () => found.seats.some((s) => s.key === IMPL_SEAT) ? IMPL_SEAT : found.seats[0]?.key ?? IMPL_SEAT)
  let outcome: Either.Either<Said.SaidWord, string> = Either.left("not written")
  const written = yield* runs.update(found.id, (r, now) => {
    const added = Said.add(r, key, text, now, images)
    outcome = Either.map(added, (a) => a.word)
    return Either.isRight(added) ? { ...r, said: added.right.said } : r
  }, { keepUpdatedAt: true }).pipe(Effect.mapError((e) => refused(found.id, e.message)))
  const decided = outcome
  if (Either.isLeft(decided)) return yield* refused(found.id, decided.left)
  const locks = yield* makeSeatLocks.pipe(Effect.provideService(FileSystem.FileSystem, fs))
  const busy = yield* locks.held(runs.dir(found.id), key)
  return {
    run: written.id,
    word: decided.right,
    line: `word ${decided.right.n} to seat ${key} of run ${Q.shortId(found.id)}: ${when(written, key, busy, self)}`
  } satisfies SayOutcome
})

/** Edit (`text`) or cancel (`undefined`) word `n` of run `wanted`, while it is still queued. */
export const change = Effect.fn("SayToSeat.change")(function* (wanted: string, n: number, text: string | undefined) {
  const runs = yield* RunStore
  const found = yield* theRun(wanted)
  let outcome: Either.Either<unknown, string> = Either.left("not written")
  const written = yield* runs.update(found.id, (r, now) => {
    const changed = Said.change(r, n, text, now)
    outcome = changed
    return Either.isRight(changed) ? { ...r, said: changed.right } : r
  }, { keepUpdatedAt: true }).pipe(Effect.mapError((e) => refused(found.id, e.message)))
  const decided = outcome
  if (Either.isLeft(decided)) return yield* refused(found.id, decided.left)
  const word = (written.said ?? []).find((w) => w.n === n)!
  return {
    run: written.id,
    word,
    line: `word ${n} to seat ${word.seat} of run ${Q.shortId(found.id)} ${text === undefined ? "cancelled" : "changed; still queued"}`
  } satisfies SayOutcome
})

/** Store the image file at `path` as an asset of run `wanted` (`magi say --image`): its asset name, or why it was refused. */
export const attachFile = Effect.fn("SayToSeat.attachFile")(function* (wanted: string, path: string) {
  const runs = yield* RunStore
  const fs = yield* FileSystem.FileSystem
  const found = yield* theRun(wanted)
  const stored = yield* ImageAssets.save(NodePath.join(runs.dir(found.id), Said.IMAGES_DIR), fs.stream(path)).pipe(
    Effect.mapError((e) => refused(found.id, e._tag === "ImageRefused" ? `${path}: ${e.message}` : `cannot read ${path}: ${e.message}`))
  )
  return stored.name
})
