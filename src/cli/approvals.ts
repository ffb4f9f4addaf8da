/**
 * `magi approvals list` / `magi approvals rm N`: the rules that decide an
 * agent's tool calls without asking. The rules "Always allow" saved are
 * numbered and removable here; the config's `[approvals]` rules are listed
 * with where they are written, and changed there.
 *
 * `magi approvals hook codex|opencode`: what a writing seat under
 * `[approvals] ask` runs for a tool call that needs permission: codex's
 * `PermissionRequest` hook (agents/adapters/codex.ts), opencode's magi plugin
 * (approvals/OpencodeHook.ts). Both decide through `Approvals.decideForAgent`.
 */
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import { Cause, Clock, Config, Duration, Effect, Option, ParseResult, Schema } from "effect"
import * as Approval from "../approvals/Approval.js"
import * as Approvals from "../approvals/Approvals.js"
import * as Rules from "../approvals/Rules.js"
import * as RuleSources from "../approvals/RuleSources.js"
import * as TrustedConfigs from "../approvals/TrustedConfigs.js"
import { MAX_SLICE, sliceUnder } from "../agents/Slices.js"
import * as OpencodeHook from "../approvals/OpencodeHook.js"
import { approvalDecisionLayer, approvalRulesLayer } from "../app/Layers.js"
import { SavedRules, type SavedRule } from "../approvals/SavedRules.js"
import { type ApprovalSettings, MagiConfig, repoRoot, userConfigFile } from "../platform/MagiConfig.js"
import { CliFailure } from "./CliFailure.js"
import { readStdinUpTo, writeErr, writeOut } from "./io.js"

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

/** How `magi approvals list` names a file's standing. */
const STANDING: Record<RuleSources.RuleFile["trust"], string> = {
  machine: "the machine's config",
  trusted: "trusted by the owner as it reads",
  untrusted: "a repository's config, not trusted: its allow rules are not in force (magi approvals trust)",
  changed: "a repository's config, changed since it was trusted: its allow rules are not in force (magi approvals trust)"
}

const list = Command.make("list", { json: Options.boolean("json").pipe(Options.withDescription("print the rules as JSON")) }, (o) =>
  Effect.gen(function* () {
    const saved = yield* Effect.flatMap(SavedRules, (s) => s.list).pipe(Effect.mapError(refused))
    const config = yield* MagiConfig
    // File by file, as the hooks read them: a repository's allow rules apply only once trusted.
    const inForce = yield* RuleSources.rulesInForce("", yield* repoRoot(process.cwd()), process.env.HOME ?? "", config)
    const files = inForce.files.map((f) => ({ file: f.file, trust: f.trust, rules: RuleSources.everyRule(f.approvals) }))
    const fromConfig = files.length > 0 ? files.flatMap((f) => f.rules.map((r) => ({ key: r.key, rule: r.rule, file: f.file }))) : configRules(config.approvals)
    if (o.json) return yield* writeOut(JSON.stringify({ saved, config: fromConfig, files }, null, 2) + "\n")
    if (saved.length === 0 && fromConfig.length === 0)
      return yield* writeOut(
        'no approval rules: every tool call that needs permission asks the owner. "Always allow" on an approval saves one; [approvals] allow and deny in the config add more\n'
      )
    if (saved.length > 0)
      yield* writeOut(`saved by "Always allow" (remove one with magi approvals rm N):\n${saved.map((r, i) => savedLine(r, i + 1)).join("")}`)
    let first = saved.length === 0
    for (const f of files) {
      if (f.rules.length === 0) continue
      yield* writeOut(`${first ? "" : "\n"}from ${f.file} (${STANDING[f.trust]}; change them there):\n`)
      first = false
      for (const { key, kind, rule } of f.rules) {
        const parsed = Rules.parseRule(rule)
        const off = kind === "allow" && (f.trust === "untrusted" || f.trust === "changed")
        yield* writeOut(
          `   ${kind === "deny" ? "deny " : "allow"} ${rule}  (${key})${Rules.isBadRule(parsed) ? `  IGNORED: ${parsed.why}` : off ? "  NOT IN FORCE" : ""}\n`
        )
      }
    }
    for (const note of inForce.notes.filter((n) => !n.includes("allow rule(s)"))) yield* writeErr(`magi: ${note}\n`)
  })).pipe(Command.withDescription('List the approval rules: those "Always allow" saved, numbered, then each config file\'s'))

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

/**
 * `magi approvals trust [--repo DIR]`: the owner vouches for the repository's
 * config files as they read now, so their allow rules apply (RuleSources.ts).
 * Refused from an agent's seat: an agent may not loosen its own rules.
 */
const trust = Command.make(
  "trust",
  { repo: Options.directory("repo").pipe(Options.withDescription("the repository whose config to trust (default: the current one)"), Options.optional) },
  (o) =>
    Effect.gen(function* () {
      const seat = (yield* Config.string("MAGI_SEAT").pipe(Config.withDefault(""), Effect.orDie)).trim()
      if (seat !== "")
        return yield* CliFailure.refused(`this shell is an agent's (seat ${seat}); only the owner trusts a repository's approval rules, never an agent`)
      const fs = yield* FileSystem.FileSystem
      const repo = yield* repoRoot(Option.getOrElse(o.repo, () => process.cwd()))
      let trusted = 0
      for (const file of RuleSources.repoConfigFiles(repo)) {
        const text = yield* fs.readFileString(file).pipe(
          Effect.map(Option.some),
          Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeedNone),
          Effect.mapError((e) => CliFailure.refused(`cannot read ${file}: ${e.message}`))
        )
        if (Option.isNone(text)) continue
        const hash = yield* TrustedConfigs.trust(file, text.value, new Date(yield* Clock.currentTimeMillis)).pipe(
          Effect.mapError((e) => CliFailure.refused(`could not record the trust of ${file}: ${e.message}`))
        )
        trusted++
        yield* writeOut(`trusted ${file} (sha256 ${hash.slice(0, 16)}): its [approvals] allow rules apply until the file changes\n`)
      }
      if (trusted === 0)
        return yield* CliFailure.refused(
          `${repo} has no .magi/config.toml or magi.toml to trust; the machine's config (${yield* userConfigFile}) needs no trust`
        )
    })
).pipe(Command.withDescription("Trust the repository's config files as they read now, so their approval allow rules apply (a change untrusts them)"))

/** More than any request codex sends (a command and a sentence); more is refused, never read whole. */
const HOOK_INPUT_MAX_BYTES = 1024 * 1024

/** codex's own hook timeout when none is configured (600 s, from its hook discovery): a slice that fits it by default. */
const CODEX_DEFAULT_HOOK_TIMEOUT = Duration.seconds(600)

/** More than any tool call's input opencode's plugin hands over (a whole file to write, say); a larger one is refused, not read whole. */
const OPENCODE_INPUT_MAX_BYTES = 16 * 1024 * 1024

/** The hook input, decided: `decideForAgent` for the call it carries, or why there is no call to decide. */
type Decide = (call: Rules.ToolCall, cwd: string) => Effect.Effect<Approval.Decision, string>

/**
 * codex's `PermissionRequest`: the request on stdin, codex's answer on
 * stdout. Whatever goes wrong denies the call: a hook that prints nothing,
 * or fails, leaves it to codex's automatic reviewer, a model, never the owner.
 */
const codexHook = (decide: Decide) =>
  Effect.gen(function* () {
    const raw = yield* readStdinUpTo(HOOK_INPUT_MAX_BYTES)
    if (raw === undefined) return yield* Effect.fail(`the request on stdin is over ${HOOK_INPUT_MAX_BYTES} bytes`)
    const request = yield* Schema.decodeUnknown(Approval.CodexPermissionRequest)(raw).pipe(
      Effect.mapError((e) =>
        `the request on stdin is not codex's PermissionRequest: ${
          ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => `${i.path.length === 0 ? "" : `${i.path.join(".")}: `}${i.message}`).join("; ")
        }`
      )
    )
    return yield* decide({ tool: request.tool_name, input: request.tool_input }, request.cwd)
  }).pipe(
    deniedOnFailure,
    Effect.flatMap((decision) => writeOut(`${Approval.permissionRequestHookOutput(decision)}\n`))
  )

/**
 * opencode's plugin (approvals/OpencodeHook.ts): the call as JSON on stdin,
 * the decision as JSON on stdout, whose message the plugin throws on a
 * denial. Failing denies here too, saying why, as the plugin would.
 */
const opencodeHook = (decide: Decide) =>
  Effect.gen(function* () {
    const text = yield* readStdinUpTo(OPENCODE_INPUT_MAX_BYTES)
    if (text === undefined) return yield* Effect.fail(`the hook's input is over ${OPENCODE_INPUT_MAX_BYTES} bytes`)
    const call = OpencodeHook.readHookCall(text)
    if (typeof call === "string") return yield* Effect.fail(call)
    return yield* decide(OpencodeHook.toolCall(call.tool, call.args), call.directory ?? process.cwd())
  }).pipe(
    deniedOnFailure,
    Effect.flatMap((decision) => {
      const printed: OpencodeHook.HookDecision = decision._tag === "allow" ? { decision: "allow" } : { decision: "deny", message: decision.message }
      return writeOut(`${JSON.stringify(printed)}\n`)
    })
  )

/** A failure as a denial saying why, told on stderr too: a hook must always answer. */
const deniedOnFailure = <R>(effect: Effect.Effect<Approval.Decision, string, R>) =>
  // display: the command's failure becomes its message and exit code
  Effect.catchAllCause(effect, (cause) => {
    const why = Option.getOrElse(Cause.failureOption(cause), () => Cause.pretty(cause))
    return writeErr(`magi: ${why}\n`).pipe(
      Effect.as<Approval.Decision>({ _tag: "deny", message: `magi could not put this call to the owner, so it is denied: ${why}` })
    )
  })

const hook = Command.make(
  "hook",
  {
    client: Args.choice([["codex", "codex"], ["opencode", "opencode"]], { name: "CLI" }).pipe(
      Args.withDescription("the agent CLI running this hook: codex (its PermissionRequest hook) or opencode (magi's plugin)")
    ),
    slice: Options.integer("slice").pipe(
      Options.withDescription(
        'seconds to wait for the owner before denying with "make the same call again" (default: under codex\'s 600 s hook timeout; ten minutes for opencode, whose plugin hooks have no limit)'
      ),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      if (Option.isSome(o.slice) && o.slice.value <= 0)
        return yield* CliFailure.usage(`--slice must be a number of seconds above 0, not ${o.slice.value}`)
      const slice = Option.match(o.slice, {
        onSome: (secs) => Duration.seconds(secs),
        onNone: () => (o.client === "codex" ? sliceUnder(CODEX_DEFAULT_HOOK_TIMEOUT) : MAX_SLICE)
      })
      const decide: Decide = (call, cwd) =>
        Approvals.decideForAgent(call, cwd, slice).pipe(
          Effect.map((decided) => decided.decision),
          Effect.provide(approvalDecisionLayer()),
          // The config's layer fails with what it read wrong (a message of its own).
          Effect.mapError((e) => (typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)))
        )
      yield* o.client === "codex" ? codexHook(decide) : opencodeHook(decide)
    })
).pipe(
  Command.withDescription(
    "An agent CLI's approval hook (codex's PermissionRequest, opencode's magi plugin): decide a tool call by the approval rules or ask the owner (magi sets it up per seat)"
  )
)

export const approvals = Command.make("approvals").pipe(
  Command.withDescription("See and remove the rules that approve agents' tool calls without asking"),
  Command.withSubcommands([list, rm, trust, hook]),
  Command.provide(() => approvalRulesLayer())
)
