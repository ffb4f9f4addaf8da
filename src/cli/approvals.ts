/**
 * `magi approvals list` / `magi approvals rm N`: the rules that decide an
 * agent's tool calls without asking. The rules "Always allow" saved are
 * numbered and removable here; the config's `[approvals]` rules are listed
 * with where they are written, and changed there.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Layer } from "effect"
import * as Rules from "../approvals/Rules.js"
import { SavedRules, type SavedRule } from "../approvals/SavedRules.js"
import { type ApprovalSettings, MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as LocalContext from "../platform/LocalContext.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"

const approvalsLayer = () =>
  SavedRules.layer.pipe(
    Layer.provideMerge(Layer.merge(MagiHome.fromEnv, MagiConfig.fromFilesOrDefaults(process.cwd(), "listing approval rules"))),
    Layer.provideMerge(LocalContext.layer)
  )

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

/** Every config rule with the key it is written under. */
const configRules = (a: ApprovalSettings): ReadonlyArray<{ readonly key: string; readonly rule: string }> => [
  ...a.deny.map((rule) => ({ key: "approvals.deny", rule })),
  ...a.allow.map((rule) => ({ key: "approvals.allow", rule })),
  ...Object.entries(a.agents).flatMap(([id, r]) => [
    ...r.deny.map((rule) => ({ key: `approvals.agents.${id}.deny`, rule })),
    ...r.allow.map((rule) => ({ key: `approvals.agents.${id}.allow`, rule }))
  ]),
  ...Object.entries(a.repos).flatMap(([path, r]) => [
    ...r.deny.map((rule) => ({ key: `approvals.repos."${path}".deny`, rule })),
    ...r.allow.map((rule) => ({ key: `approvals.repos."${path}".allow`, rule }))
  ])
]

const savedLine = (r: SavedRule, n: number) =>
  `${n}  allow ${r.rule}  in ${r.repo}  (saved ${r.added_at.slice(0, 16).replace("T", " ")}, question ${r.question.slice(r.question.lastIndexOf("-") + 1)})\n`

const list = Command.make("list", { json: Options.boolean("json").pipe(Options.withDescription("print the rules as JSON")) }, (o) =>
  Effect.gen(function* () {
    const saved = yield* Effect.flatMap(SavedRules, (s) => s.list).pipe(Effect.mapError(refused))
    const config = yield* MagiConfig
    const fromConfig = configRules(config.approvals)
    if (o.json) return yield* writeOut(JSON.stringify({ saved, config: fromConfig }, null, 2) + "\n")
    if (saved.length === 0 && fromConfig.length === 0)
      return yield* writeOut(
        'no approval rules: every tool call that needs permission asks the owner. "Always allow" on an approval saves one; [approvals] allow and deny in the config add more\n'
      )
    if (saved.length > 0)
      yield* writeOut(`saved by "Always allow" (remove one with magi approvals rm N):\n${saved.map((r, i) => savedLine(r, i + 1)).join("")}`)
    if (fromConfig.length > 0) {
      if (saved.length > 0)
        yield* writeOut("\n")
      yield* writeOut(`from the config (${config.files.join(", ") || "no file"}; change them there):\n`)
      for (const { key, rule } of fromConfig) {
        const parsed = Rules.parseRule(rule)
        yield* writeOut(`   ${key.endsWith(".deny") ? "deny " : "allow"} ${rule}  (${key})${Rules.isBadRule(parsed) ? `  IGNORED: ${parsed.why}` : ""}\n`)
      }
    }
  })).pipe(Command.withDescription('List the approval rules: those "Always allow" saved, numbered, then the config\'s'))

const rm = Command.make(
  "rm",
  { which: Args.text({ name: "N" }).pipe(Args.withDescription("the rule's number in magi approvals list, or its id")) },
  (o) =>
    Effect.gen(function* () {
      const store = yield* SavedRules
      const saved = yield* store.list.pipe(Effect.mapError(refused))
      const which = o.which.trim()
      const byNumber = /^\d+$/.test(which) ? saved[Number(which) - 1] : undefined
      const target = byNumber ?? saved.find((r) => r.id === which)
      if (target === undefined)
        return yield* CliFailure.refused(
          saved.length === 0
            ? "there are no saved approval rules to remove; magi approvals list shows the rules"
            : `no saved approval rule ${which}: give a number from 1 to ${saved.length} (magi approvals list), or a rule's id`
        )
      yield* store.remove(target.id).pipe(Effect.mapError(refused))
      yield* writeOut(`removed allow ${target.rule} in ${target.repo}\n`)
      yield* writeErr("magi: calls it matched ask the owner again\n")
    })
).pipe(Command.withDescription('Remove a rule "Always allow" saved, by its number in magi approvals list'))

export const approvals = Command.make("approvals").pipe(
  Command.withDescription("See and remove the rules that approve agents' tool calls without asking"),
  Command.withSubcommands([list, rm]),
  Command.provide(() => approvalsLayer())
)
