/**
 * Asking the owner, as every front door does it: `magi ask` on an agent's
 * shell and the `ask`/`reply`/`wait` tools of `magi mcp`. One set of rules
 * for filing a fresh question, replying on its thread and picking up a wait,
 * so the two doors cannot disagree on who asked, what is refused, or how
 * much of a deadline is left.
 *
 * What each door prints (progress lines, stdout, tool results) stays with
 * the door; this module only files, checks and loads.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Config, Data, Effect, Option, Random } from "effect"
import * as Q from "./Question.js"
import type { Question } from "./Question.js"
import { PANEL_MAX_BYTES, QuestionStore } from "./QuestionStore.js"
import { MagiConfig } from "../platform/MagiConfig.js"

/**
 * Why an ask was not taken: `usage` for a mistake in how it was called (a
 * missing summary), `refused` for input the rules turn down or a question
 * that cannot take it. The CLI exits 2 and 1 for them; the MCP tool says so.
 */
export class AskRefused extends Data.TaggedError("AskRefused")<{
  readonly message: string
  readonly kind: "usage" | "refused"
}> {
  static usage = (message: string) => new AskRefused({ message, kind: "usage" })
  static refused = (message: string) => new AskRefused({ message, kind: "refused" })
}

/**
 * Who is asking, from the environment magi gives an agent seat (`MAGI_RUN`,
 * `MAGI_NODE`, `MAGI_SEAT`): the waiter resumes exactly this seat when the
 * asker's process is gone by the time the owner answers.
 */
export const asker = Effect.gen(function* () {
  const run = yield* Config.string("MAGI_RUN").pipe(Config.withDefault(""))
  const node = yield* Config.string("MAGI_NODE").pipe(Config.withDefault("ask"))
  const seat = yield* Config.string("MAGI_SEAT").pipe(Config.withDefault("operator"))
  return { run, node: node || "ask", seat: seat || "operator" }
}).pipe(Effect.orDie)

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A question from another run is not this agent's to continue. */
export const ensureSameRun = (q: Question, run: string, form: string) =>
  run !== "" && q.run !== "" && q.run !== run
    ? Effect.fail(
      AskRefused.refused(
        `question ${Q.shortId(q.id)} belongs to run ${q.run}, not to this run ${run}; ${form} only continues this run's own questions`
      )
    )
    : Effect.void

/** The question, or a refusal that says why it cannot be read. */
export const load = (id: string) => Effect.flatMap(QuestionStore, (store) => store.get(id)).pipe(Effect.mapError((e) => AskRefused.refused(e.message)))

/**
 * A panel as given: a file the CLI names (`--panel FILE.html`) or the HTML
 * text itself (an MCP client sends text); `assets` are files beside it that
 * the panel names by their bare file names.
 */
export type PanelSource =
  | { readonly _tag: "File"; readonly path: string; readonly assets: ReadonlyArray<string> }
  | { readonly _tag: "Html"; readonly html: string; readonly assets: ReadonlyArray<string> }

const panelHtml = (panel: PanelSource) =>
  Effect.gen(function* () {
    if (panel._tag === "Html") {
      if (Buffer.byteLength(panel.html) > PANEL_MAX_BYTES)
        return yield* AskRefused.refused(`the panel is over magi's cap of ${PANEL_MAX_BYTES} bytes for a whole panel`)
      return panel.html
    }
    const fs = yield* FileSystem.FileSystem
    const cannot = (why: string) => AskRefused.refused(`cannot read the panel ${panel.path}: ${why}`)
    // Judged before it is read: `/dev/zero` or a pipe would never end.
    const info = yield* fs.stat(panel.path).pipe(
      Effect.mapError((e) =>
        e._tag === "SystemError" && e.reason === "NotFound"
          ? AskRefused.refused(`--panel ${panel.path}: there is no such file`)
          : cannot(e.message)
      )
    )
    if (info.type !== "File") return yield* cannot(`it is not a regular file (${info.type}); a panel is an HTML file`)
    if (Number(info.size) > PANEL_MAX_BYTES)
      return yield* cannot(`it is ${info.size} bytes, over magi's cap of ${PANEL_MAX_BYTES} bytes for a whole panel`)
    return yield* fs.readFileString(panel.path).pipe(Effect.mapError((e) => cannot(e.message)))
  })

/** Store the panel (when given) on `q`, before the record that claims it is written. */
export const withPanel = (q: Question, panel: Option.Option<PanelSource>) =>
  Effect.gen(function* () {
    if (Option.isNone(panel)) return q
    const html = yield* panelHtml(panel.value)
    const store = yield* QuestionStore
    return yield* store.putPanel(q, html, panel.value.assets).pipe(Effect.mapError((e) => AskRefused.refused(e.message)))
  })

/**
 * Ids drawn before giving up. Two asks in one second share an id once in
 * 65,536 pairs; sixteen draws all taken means something else is wrong.
 */
const ID_DRAWS = 16

/**
 * File a fresh question: under a freshly drawn id, created new (with its
 * panel, under the id's lock), so it never overwrites another question that
 * drew the same id in the same second; a taken id is drawn again.
 */
const fileFresh = (draft: (id: string) => Question, panel: Option.Option<PanelSource>) =>
  Effect.gen(function* () {
    const store = yield* QuestionStore
    for (let draw = 0; draw < ID_DRAWS; draw++) {
      const id = Q.makeId(yield* now, yield* Random.nextIntBetween(0, 0x10000))
      const filed = yield* store
        .fileNew(draft(id), (q) => withPanel(q, panel))
        .pipe(Effect.catchTags({ StoreError: (e) => Effect.fail(AskRefused.refused(e.message)) }))
      if (Option.isSome(filed)) return filed.value
    }
    return yield* AskRefused.refused(`every one of ${ID_DRAWS} question ids drawn was already taken in ${store.where}; try again`)
  })

export interface NewQuestion {
  readonly summary: string
  readonly detail: string
  readonly choices: ReadonlyArray<string>
  /** The question's whole deadline; none takes `[ask] answer_timeout`. */
  readonly timeoutSecs: Option.Option<number>
  readonly panel: Option.Option<PanelSource>
  /** Where the agent runs, so the daemon can resume it there if the asker is gone. */
  readonly cwd: string
}

/** File a fresh question; with its deadline in seconds, for the first wait. */
export const fileQuestion = (input: NewQuestion) =>
  Effect.gen(function* () {
    if (input.summary.trim() === "") return yield* AskRefused.usage("a question needs a summary: the question in one line")
    const config = yield* MagiConfig
    const timeoutSecs = Option.getOrElse(input.timeoutSecs, () => config.answerTimeoutSecs)
    if (!(timeoutSecs > 0)) return yield* AskRefused.usage(`the timeout must be a number of seconds above 0, not ${timeoutSecs}`)
    const wrong = Q.checkNew({ summary: input.summary, detail: input.detail, choices: input.choices })
    if (wrong._tag === "Left") return yield* AskRefused.refused(wrong.left.message)
    const who = yield* asker
    const askedAt = yield* now
    const draft = (id: string): Question => ({
      ...Q.make({
        id,
        ...who,
        summary: input.summary,
        detail: input.detail,
        choices: input.choices.filter((c) => c !== ""),
        now: askedAt,
        cwd: input.cwd
      }),
      answer_timeout: timeoutSecs
    })
    // fileFresh put it on disk: only now is it a question the owner has.
    const question = yield* fileFresh(draft, input.panel)
    return { question, budgetMs: timeoutSecs * 1000 }
  })

export interface Reply {
  readonly summary: string
  readonly detail: string
  readonly choices: ReadonlyArray<string>
  readonly panel: Option.Option<PanelSource>
}

/**
 * Reply on an open question's thread (the agent answering the owner's words);
 * with what is left of its deadline, for the wait that follows.
 */
export const replyOn = (id: string, input: Reply, form: string) =>
  Effect.gen(function* () {
    if (input.summary.trim() === "") return yield* AskRefused.usage(`${form} needs a summary: your reply to the owner`)
    const store = yield* QuestionStore
    const config = yield* MagiConfig
    const who = yield* asker
    const current = yield* load(id)
    yield* ensureSameRun(current, who.run, form)
    if (!Q.isOpen(current)) {
      // Checked before the panel is replaced, so a refused reply touches nothing.
      const refused = Q.reply(current, input.summary, input.choices, yield* now)
      if (refused._tag === "Left") return yield* AskRefused.refused(refused.left.message)
    }
    const body = input.detail.trim() === "" ? input.summary : `${input.summary}\n\n${input.detail}`
    const panelled = yield* withPanel(current, input.panel)
    const at = yield* now
    const question = yield* store
      .update(current.id, (fresh) =>
        Q.reply(
          Option.isSome(input.panel) ? { ...fresh, panel: panelled.panel, assets: panelled.assets } : fresh,
          body,
          input.choices,
          at
        ))
      .pipe(Effect.mapError((e) => AskRefused.refused(e.message)))
    return { question, budgetMs: Q.budgetLeftMs(question, config.answerTimeoutSecs, at) }
  })

/** A question to keep waiting on, and what is left of its deadline. */
export const openForWait = (id: string, form: string) =>
  Effect.gen(function* () {
    const config = yield* MagiConfig
    const who = yield* asker
    const question = yield* load(id)
    yield* ensureSameRun(question, who.run, form)
    return { question, budgetMs: Q.budgetLeftMs(question, config.answerTimeoutSecs, yield* now) }
  })

/** Why the question was abandoned, as the agent should read it. */
export const abandonedLine = (q: Question) => {
  const why = /_Abandoned: (.*)\._\s*$/.exec(q.detail)?.[1]
  return `question ${Q.shortId(q.id)} is abandoned${why ? `: ${why}` : ""}; no answer will come`
}
