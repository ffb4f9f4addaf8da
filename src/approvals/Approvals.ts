/**
 * Deciding one tool call that needs permission: the one entry point behind
 * `magi mcp`'s `approve` tool.
 *
 * 1. The rules decide first (`Rules.decide`): `[approvals]`'s deny and allow
 *    rules (everywhere, for this agent, for this repository) and the rules
 *    "Always allow" saved for this repository (`SavedRules`). A rule's
 *    decision is final and logged.
 * 2. Else the owner is asked with an approval question (`Approval.questionFor`),
 *    and this call waits one slice like any `magi ask`. A call re-tried after
 *    a pending slice, or after magi resumed the seat, finds the question it
 *    already asked (same seat, same run, same input digest) instead of
 *    asking again: an open one is waited on, an answered one not yet
 *    delivered is the decision.
 * 3. The owner's answer is the decision; "Always allow" also saves the rule
 *    shown on the choice. Every decision goes to the audit log.
 *
 * `decideForAgent` is what each CLI's route calls (claude's
 * `--permission-prompt-tool` through `magi mcp`'s `approve` tool, codex's
 * `PermissionRequest` hook and opencode's plugin through `magi approvals
 * hook`): one slice,
 * and a pending slice told as a denial that says how to get the decision.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Config, Duration, Effect, Either, Option, Random } from "effect"
import { MagiConfig, repoRoot } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { QuestionStore, StoreError } from "../questions/QuestionStore.js"
import * as Lease from "../questions/Leases.js"
import { make as makeWaits, POLL, WaitOutcome, AskerWait, type AskerWaitShape } from "../questions/AskerWait.js"
import * as Approval from "./Approval.js"
import { AuditLog } from "./AuditLog.js"
import { withResolvedPath } from "./FilePaths.js"
import { rulesInForce } from "./RuleSources.js"
import { loadParser } from "./ShellCommands.js"
import * as Rules from "./Rules.js"
import type * as RecordStore from "../store/RecordStore.js"
import { SavedRules, type SavedRulesError } from "./SavedRules.js"

export interface ApprovalRequest {
  readonly call: Rules.ToolCall
  /** `MAGI_RUN`, `MAGI_NODE`, `MAGI_SEAT` and `MAGI_AGENT` of the asking agent ("" outside magi). */
  readonly run: string
  readonly node: string
  readonly seat: string
  readonly agent: string
  /** The agent's working directory. */
  readonly cwd: string
  /** The repository it works for (`MAGI_REPO`; a run's worktree is not it); "" for `cwd`'s own. */
  readonly repo?: string
}

export type ApprovalOutcome =
  | {
    readonly _tag: "Decided"
    readonly decision: Approval.Decision
    readonly by: "rule" | "owner"
    /** The rule that decided, or the one "Always allow" saved. */
    readonly rule?: string
    readonly question?: string
  }
  /** The slice ran out before the owner decided: the question stays open, and the same call again keeps waiting. */
  | { readonly _tag: "Pending"; readonly question: Q.Question }

/** What the agent is told while the owner has not decided: a denial that says how to get the decision. */
export const pendingMessage = (q: Q.Question): string =>
  `magi asked the owner to approve this call (question ${Q.shortId(q.id)}) and has no decision yet. ` +
  "Make exactly the same tool call again to keep waiting for the decision, or end your turn: magi resumes you with it."

/** The config's rules for one agent in one repository: see RuleSources.ts. */
export { configRules } from "./RuleSources.js"

export interface ApprovalsShape {
  readonly decide: (request: ApprovalRequest) => Effect.Effect<ApprovalOutcome, StoreError | SavedRulesError | RecordStore.Failed>
}

/** Decisions waiting with the `AskerWait` provided (one slice per call). */
export class Approvals extends Effect.Service<Approvals>()("magi/Approvals", {
  effect: Effect.suspend(() => Effect.flatMap(AskerWait, makeWith))
}) {
  static layer = Approvals.Default
}

/** Ids drawn before giving up, as `magi ask` does. */
const ID_DRAWS = 16

/** Decisions that wait with `waits`: `magi mcp` makes one per tool call, its slice the client's. */
export const makeWith = (waits: AskerWaitShape) =>
  Effect.gen(function* () {
    const config = yield* MagiConfig
    const store = yield* QuestionStore
    const saved = yield* SavedRules
    const audit = yield* AuditLog
    const fs = yield* FileSystem.FileSystem
    const magiHome = yield* MagiHome
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const home = process.env.HOME ?? ""

    const logged = (r: ApprovalRequest, digest: string, outcome: ApprovalOutcome & { readonly _tag: "Decided" }) =>
      Effect.gen(function* () {
        yield* audit
          .append({
            at: (yield* now).toISOString(),
            run: r.run,
            seat: r.seat,
            tool: r.call.tool,
            digest,
            decision: outcome.decision._tag,
            by: outcome.by,
            ...(outcome.rule === undefined ? {} : { rule: outcome.rule }),
            ...(outcome.question === undefined ? {} : { question: outcome.question })
          })
          // The decision stands without its log line; the owner is told in the log of this process.
          // display: a rule that could not be saved is logged; the decision already stands
          .pipe(Effect.catchAll((e) => Effect.logWarning(`approvals: ${e.message}`)))
        return outcome
      })

    /** The owner's word on `q`, as the decision, with "Always allow"'s rule saved. */
    const ownersDecision = (r: ApprovalRequest, repo: string, digest: string, q: Q.Question, words: string) =>
      Effect.gen(function* () {
        const decision = Approval.decisionOf(words)
        // A rule too long to offer was never kept (`markedRule`), so typing "Always allow …" saves nothing.
        const marked = q.approval?.rule
        const rule = decision._tag === "allow" && decision.always && marked !== undefined && marked !== "" ? marked : undefined
        if (rule !== undefined) yield* saved.add(rule, repo, q.id)
        return yield* logged(r, digest, { _tag: "Decided", decision, by: "owner", question: q.id, ...(rule === undefined ? {} : { rule }) })
      })

    const fromWait = (r: ApprovalRequest, repo: string, digest: string, outcome: WaitOutcome) =>
      Effect.gen(function* () {
        switch (outcome._tag) {
          case "Pending":
            return { _tag: "Pending", question: outcome.question } satisfies ApprovalOutcome
          case "Abandoned":
            return yield* logged(r, digest, {
              _tag: "Decided",
              decision: { _tag: "deny", message: "The owner did not decide on this tool call in time; it is denied." },
              by: "owner",
              question: outcome.question.id
            })
          case "Answered":
          case "Replied": {
            const decided = yield* ownersDecision(r, repo, digest, outcome.question, outcome._tag === "Answered" ? outcome.answer : outcome.said)
            yield* waits.markDelivered(outcome)
            return decided
          }
        }
      })

    const fileNew = (r: ApprovalRequest, repo: string, digest: string, rule: string) =>
      Effect.gen(function* () {
        const shown = Approval.questionFor({ call: r.call, run: r.run, seat: r.seat, rule, repo })
        // Never a record over the caps: a question nobody can open is no question.
        const wrong = Q.checkNew(shown)
        if (Either.isLeft(wrong)) return yield* new StoreError({ message: `the approval question would not fit: ${wrong.left.message}` })
        for (let draw = 0; draw < ID_DRAWS; draw++) {
          const q: Q.Question = {
            ...Q.make({
              id: Q.makeId(yield* now, yield* Random.nextIntBetween(0, 0x10000)),
              run: r.run,
              node: r.node || "ask",
              seat: r.seat || "operator",
              ...shown,
              now: yield* now,
              cwd: r.cwd,
              approval: { tool: Approval.toolShown(r.call.tool), digest, rule: Approval.markedRule(rule) }
            }),
            answer_timeout: config.answerTimeoutSecs
          }
          if (yield* store.create(q)) return Option.some(q)
        }
        return Option.none<Q.Question>()
      })

    const decide = (r: ApprovalRequest) =>
      Effect.gen(function* () {
        const repo = r.repo !== undefined && r.repo !== "" ? r.repo : yield* repoRoot(r.cwd).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        const digest = Approval.inputDigest(r.call)
        const fromConfig = yield* rulesInForce(r.agent, repo, home, config).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.provideService(MagiHome, magiHome)
        )
        for (const bad of fromConfig.bad) yield* Effect.logWarning(`approvals: ignoring a rule: ${bad.why}`)
        for (const note of fromConfig.notes) yield* Effect.logWarning(`approvals: ${note}`)
        const savedRules = (yield* saved.list).flatMap((s): ReadonlyArray<Rules.SourcedRule> => {
          const rule = Rules.parseRule(s.rule)
          return s.repo === repo && !Rules.isBadRule(rule) ? [{ rule, source: { _tag: "saved", id: s.id } }] : []
        })
        yield* loadParser
        const resolved = yield* withResolvedPath(r.call, r.cwd).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        const verdict = Rules.decide(resolved, [...fromConfig.allow, ...savedRules], fromConfig.deny)
        if (verdict._tag === "deny")
          return yield* logged(r, digest, {
            _tag: "Decided",
            decision: { _tag: "deny", message: `magi's approval rule ${verdict.by.rule.text} denies this tool call.` },
            by: "rule",
            rule: verdict.by.rule.text
          })
        if (verdict._tag === "allow")
          return yield* logged(r, digest, { _tag: "Decided", decision: { _tag: "allow", always: false }, by: "rule", rule: verdict.by.rule.text })

        // Asked before? The newest approval of this very call by this seat decides what to do.
        const [latest] = Approval.sameCall(yield* store.list, r.seat || "operator", r.run, digest)
        if (latest !== undefined && Q.isOpen(latest)) {
          const left = Q.budgetLeftMs(latest, config.answerTimeoutSecs, yield* now)
          return yield* fromWait(r, repo, digest, yield* waits.resumeWait(latest, Duration.millis(Math.max(1, left))))
        }
        if (latest !== undefined && latest.status === "answered" && !latest.answer_delivered) {
          const words = Q.resolution(latest) ?? ""
          const decided = yield* ownersDecision(r, repo, digest, latest, words)
          yield* waits.markDelivered(WaitOutcome.Answered({ answer: words, question: latest }))
          return decided
        }
        const filed = yield* fileNew(r, repo, digest, Rules.suggestRule(r.call))
        if (Option.isNone(filed))
          return yield* new StoreError({ message: `every one of ${ID_DRAWS} question ids drawn was already taken in ${store.where}; try again` })
        return yield* fromWait(r, repo, digest, yield* waits.announceAndWait(filed.value, Duration.seconds(config.answerTimeoutSecs)))
      })

    return { decide } satisfies ApprovalsShape
  })

/** A magi variable of the agent's environment, "" when unset. */
// fallback: an unset or unreadable variable is empty, as the shell sees it
const envVar = (name: string) => Config.string(name).pipe(Config.withDefault(""), Effect.orElseSucceed(() => ""))

/** What one route tells its CLI: the decision, and whether the owner made it (claude reports that). */
export interface AgentDecision {
  readonly decision: Approval.Decision
  readonly byOwner: boolean
}

/**
 * One tool call of the agent this process serves (its `MAGI_RUN`,
 * `MAGI_NODE`, `MAGI_SEAT`, `MAGI_AGENT`, `MAGI_REPO`), working in `cwd`,
 * decided with at most one `slice` of waiting. A slice that ends first is a
 * denial telling the agent to make the same call again or end its turn
 * (`pendingMessage`): the question stays open, and the waiter resumes the
 * seat once the owner decides.
 */
export const decideForAgent = (call: Rules.ToolCall, cwd: string, slice: Duration.Duration) =>
  Effect.scoped(
    Effect.gen(function* () {
      const node = yield* envVar("MAGI_NODE")
      const waits = yield* makeWaits(slice, POLL, Lease.kindForNode(node))
      const approvals = yield* makeWith(waits)
      const outcome = yield* approvals.decide({
        call,
        run: yield* envVar("MAGI_RUN"),
        node,
        seat: yield* envVar("MAGI_SEAT"),
        agent: yield* envVar("MAGI_AGENT"),
        repo: yield* envVar("MAGI_REPO"),
        cwd
      })
      return outcome._tag === "Decided"
        ? { decision: outcome.decision, byOwner: outcome.by === "owner" } satisfies AgentDecision
        : { decision: { _tag: "deny", message: pendingMessage(outcome.question) }, byOwner: false } satisfies AgentDecision
    })
  )
