/**
 * What a gate attempt comes to: pure, tested as a table. Every command must
 * exit 0; a failure that printed something gets a fix round while rounds
 * remain; a timeout never does (the fixer cannot be shown what hung); and a
 * gate with nothing run is never called passed.
 */
import type { Check } from "../runs/Competition.js"

export type GateNext =
  | { readonly _tag: "passed" }
  | { readonly _tag: "none" }
  | { readonly _tag: "fix"; readonly failing: ReadonlyArray<Check> }
  | { readonly _tag: "blocked"; readonly why: string }

const said = (c: Check) => `\`${c.command}\` ${c.timed_out ? "timed out" : `exited ${c.exit ?? "without a code"}`}`

export const afterGate = (commands: ReadonlyArray<string>, results: ReadonlyArray<Check>, fixRoundsUsed: number, fixRounds: number): GateNext => {
  if (commands.length === 0) return { _tag: "none" }
  const failing = results.filter((c) => c.exit !== 0)
  if (results.length === commands.length && failing.length === 0) return { _tag: "passed" }
  if (failing.length === 0) return { _tag: "blocked", why: "the gate did not run every command" }
  const timedOut = failing.filter((c) => c.timed_out)
  if (timedOut.length > 0) return { _tag: "blocked", why: `the gate failed: ${failing.map(said).join("; ")} (a timeout gets no fix round)` }
  if (failing.some((c) => c.tail.trim() === "")) return { _tag: "blocked", why: `the gate failed with no output to fix from: ${failing.map(said).join("; ")}` }
  if (fixRoundsUsed >= fixRounds) return { _tag: "blocked", why: `the gate still fails after ${fixRounds} fix rounds: ${failing.map(said).join("; ")}` }
  return { _tag: "fix", failing }
}
