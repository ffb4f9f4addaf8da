/**
 * `magi show ID --follow [--seat S]`: a seat's turn in a terminal as it
 * happens, the same events the run's page shows (`agents/LiveLog.ts`):
 * what the seat's log holds, then each event as it is appended, until the
 * turn ends. Every string is the agent's, escaped for the terminal.
 */
import { Duration, Effect, Schedule, Stream } from "effect"
import * as LiveLog from "../agents/LiveLog.js"
import { forTerminal, forTerminalLine } from "../platform/TerminalText.js"
import { type Run, RunStore } from "../runs/Runs.js"
import { CliFailure } from "./CliFailure.js"
import { writeOut } from "./io.js"

/** How often the record is read to learn that the run stopped running without its turn's end in the log (a killed loop). */
const RECORD_EVERY = Duration.seconds(2)

/** One event as terminal lines: a message indented, a tool with its command, its result after an arrow, errors marked. */
export const liveLines = (e: LiveLog.LiveEntry): string => {
  switch (e.kind) {
    case "message":
      return forTerminal(e.text).split("\n").map((l) => `  ${l}\n`).join("")
    case "tool":
      return `▸ ${forTerminalLine(e.name)}${e.target === "" ? "" : ` ${forTerminalLine(e.target)}`}\n`
    case "result":
      return `  ${e.failed ? "✗" : "→"} ${forTerminalLine(e.text)}\n`
    case "error":
      return `! ${forTerminalLine(e.text)}\n`
    case "end":
      return e.failed ? `— turn ${e.turn} ended: ${forTerminalLine(e.text)}\n` : `— turn ${e.turn} ended\n`
  }
}

const active = (r: Run) => r.status === "running" || r.status === "preparing"

/** Print seat `seat` of `r` (its first when none is named) until its turn ends, or at once what is there when none runs. */
export const followSeat = (r: Run, seat: string | undefined) =>
  Effect.gen(function* () {
    const store = yield* RunStore
    const found = seat === undefined ? r.seats[0] : r.seats.find((s) => s.key === seat)
    if (found === undefined) {
      return yield* CliFailure.refused(
        r.seats.length === 0
          ? `run ${r.id} has no seats yet; try again once its first turn starts`
          : `run ${r.id} has no seat \`${forTerminalLine(seat ?? "")}\`; its seats: ${r.seats.map((s) => s.key).join(", ")}`
      )
    }
    const file = LiveLog.liveFile(store.artifactsDir(r.id), found.key)
    const backlog = yield* LiveLog.read(file).pipe(Effect.mapError((e) => CliFailure.refused(`cannot read ${file}: ${e.message}`)))
    yield* writeOut(`following ${found.key} of ${r.id} (ctrl-c to stop)\n`)
    for (const e of backlog) yield* writeOut(liveLines(e))
    if (!active(r) && (backlog.length === 0 || backlog.at(-1)!.kind === "end"))
      return yield* writeOut(backlog.length === 0 ? `(${found.key} printed nothing live; the run is ${r.status})\n` : `(the run is ${r.status})\n`)
    // The run settled without the end in the log (its process was killed): stop too, a poll after.
    const settled = store.get(r.id).pipe(
      Effect.repeat({ schedule: Schedule.spaced(RECORD_EVERY), until: (now) => !active(now) }),
      Effect.zipRight(Effect.sleep(RECORD_EVERY)),
      // fallback: a record that cannot be read never ends the follow; the log's end does
      Effect.orElse(() => Effect.never)
    )
    yield* LiveLog.follow(file, { after: backlog.at(-1)?.seq ?? 0 }).pipe(
      Stream.takeUntil((e) => e.kind === "end"),
      Stream.interruptWhen(settled),
      Stream.runForEach((e) => writeOut(liveLines(e)))
    )
  })
