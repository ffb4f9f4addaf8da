/**
 * `magi say ID [--seat KEY] "…"`: the owner's words to a run's seat, kept in
 * the run and given to that seat's session by the loop on the run's host
 * (`runs/SayToSeat.ts`); `--edit N` and `--cancel N` change a word still
 * queued behind a running turn.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { runListingLayer } from "../app/Layers.js"
import * as SayToSeat from "../runs/SayToSeat.js"
import { CliFailure } from "./CliFailure.js"
import type { HelpExtras } from "./Help.js"
import { writeOut } from "./io.js"

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

export const say = Command.make(
  "say",
  {
    seat: Options.text("seat").pipe(
      Options.withPseudoName("KEY"),
      Options.withDescription("the seat to speak to (default: the implementing seat; a competition's candidates are impl-A, impl-B, …)"),
      Options.optional
    ),
    edit: Options.integer("edit").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("replace word N's text, while it is still queued"),
      Options.optional
    ),
    cancel: Options.integer("cancel").pipe(Options.withPseudoName("N"), Options.withDescription("cancel word N, while it is still queued"), Options.optional),
    image: Options.file("image").pipe(
      Options.withPseudoName("FILE"),
      Options.withDescription("attach an image (PNG, JPEG, GIF or WebP, up to 8 MiB): the agent is given its path"),
      Options.optional
    ),
    id: Args.text({ name: "id" }).pipe(Args.withDescription("the run: its id, or its short id")),
    text: Args.text({ name: "words" }).pipe(Args.withDescription("what to say to the seat, in quotes"), Args.repeated)
  },
  (o) =>
    Effect.gen(function* () {
      const text = o.text.join(" ")
      if (Option.isSome(o.cancel)) {
        if (Option.isSome(o.edit) || Option.isSome(o.seat) || text !== "") return yield* CliFailure.usage("--cancel N takes only the run's id")
        return yield* writeOut((yield* SayToSeat.change(o.id, o.cancel.value, undefined).pipe(Effect.mapError(refused))).line + "\n")
      }
      if (text.trim() === "") return yield* CliFailure.usage(`magi say needs the words, in quotes: magi say ${o.id} "…"`)
      if (Option.isSome(o.edit)) {
        if (Option.isSome(o.seat)) return yield* CliFailure.usage("--edit N keeps word N's seat; leave out --seat")
        return yield* writeOut((yield* SayToSeat.change(o.id, o.edit.value, text).pipe(Effect.mapError(refused))).line + "\n")
      }
      const images = Option.isNone(o.image) ? [] : [yield* SayToSeat.attachFile(o.id, o.image.value).pipe(Effect.mapError(refused))]
      return yield* writeOut((yield* SayToSeat.say(o.id, o.seat, text, images).pipe(Effect.mapError(refused))).line + "\n")
    }).pipe(Effect.provide(runListingLayer()))
).pipe(Command.withDescription("Say something to a run's seat: its agent's session is resumed with your words, or they wait for its running turn to end"))

export const sayHelp: HelpExtras = {
  usage: ['magi say ID [--seat KEY] "WORDS"', 'magi say ID --edit N "WORDS"', "magi say ID --cancel N"],
  examples: [
    ['magi say ab12 "use the existing retry helper"', "the implementing seat takes it up in its next turn"],
    ['magi say ab12 --seat impl-B "also cover timeouts"', "one candidate of a competition"],
    ["magi say ab12 --cancel 2", "take back a word still queued"]
  ]
}
