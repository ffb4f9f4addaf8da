/**
 * The question list as the web serves it, read once per change of the store
 * rather than once per request.
 *
 * Every open phone tab refetches the list on every change event, and the
 * list is one file read per question: with a thousand questions in history,
 * reading them per request is what would make the page slow, not the network.
 * So the views are kept, keyed by the store's revision (the directory's
 * mtime), and re-read only when it moves.
 *
 * A revision can be trusted only once it is old. File times come from a
 * coarse kernel clock, so a write landing in the same tick as the read that
 * filled the cache would leave the revision unchanged and the cache stale
 * forever. Git's index has the same "racy" problem and the same answer: a
 * snapshot is kept only when its revision is older than `Memo.MTIME_SLACK_MS` at the
 * moment reading began, which any later write cannot share.
 *
 * Each view also says who holds the question's wait (`holder`), which is not
 * in the question file: it comes from the lease beside it, judged at the
 * server's clock, and a lease goes stale with no file changing. So holders
 * are judged on every request, for the questions that can have one
 * (`mayBeHeld`), from one look at the lease index (`LeaseIndex`: read once
 * per change of the leases folder), and the serialised list is kept per
 * revision *and* holders.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import * as Memo from "../store/files/Memo.js"
import * as NodeCrypto from "node:crypto"
import * as NodeZlib from "node:zlib"
import * as Lease from "../questions/Leases.js"
import { Leases } from "../questions/Leases.js"
import * as History from "../questions/History.js"
import * as Q from "../questions/Question.js"
import type { Question } from "../questions/Question.js"
import { QuestionStore, type StoreError } from "../questions/QuestionStore.js"
import { type Holder, mayBeHeld } from "../questions/Holding.js"
import { Hosts, queuedQuestions } from "../platform/Hosts.js"
import { RunStore } from "../runs/Runs.js"
import { listed } from "./DetailPreview.js"

export type { Holder }

/** A question as the API shows it: the record, whose turn it is, and who waits on it. */
export type QuestionView = Question & {
  readonly waiting_on_agent: boolean
  readonly holder: Holder
  /** When it was answered or abandoned (`History.settledAt`), the order history is shown in; null while open. */
  readonly settled_at: string | null
  /**
   * "queued behind 3 turns on buildbox": the owner's words wait for room on
   * the seat's host to be resumed (its `[host] max_turns` are all taken);
   * null otherwise. From the host's record, so every host's page says it.
   */
  readonly queued: string | null
  /**
   * What the question's run is for: its instruction's first line (a queued
   * task's title), so six "Which storage backend?" cards from six runs tell
   * apart. Null outside a run, or for a run this server cannot read.
   */
  readonly run_title: string | null
  /**
   * True in a list when `detail` is only its start (`DetailPreview.ts`);
   * the single-question route always sends the whole detail.
   */
  readonly detail_cut: boolean
}

/** The first non-blank line of a run's instruction, cut to a card's line. */
export const runTitle = (instruction: string): string | null => {
  const line = instruction.split("\n").find((l) => l.trim() !== "")?.trim().replace(/^[#>*\-\s]+/, "")
  return line === undefined || line === "" ? null : line.length > 100 ? `${line.slice(0, 99)}…` : line
}

export const view = (q: Question, holder: Holder, queued: string | null = null, run_title: string | null = null): QuestionView => {
  const settled = History.settledAt(q)
  return {
    ...q,
    waiting_on_agent: Q.waitingOnAgent(q),
    holder,
    queued,
    run_title,
    detail_cut: false,
    settled_at: settled === undefined || !Number.isFinite(settled) ? null : new Date(settled).toISOString()
  }
}

/**
 * Settled questions in the first page of history `GET /api/questions` sends
 * with the open ones: a phone screen or two of cards, so the page draws at
 * once; the rest comes by `GET /api/questions/history` as the owner scrolls.
 */
export const HISTORY_PAGE = 30

/** Most settled questions one history request may ask for: a page is read file by file. */
export const HISTORY_LIMIT_MAX = 200

/** The body of `GET /api/questions`. */
export interface QuestionList {
  readonly open: ReadonlyArray<QuestionView>
  readonly history: ReadonlyArray<QuestionView>
  /** The cursor for `GET /api/questions/history?before=`; null when there is no older history. */
  readonly next: string | null
}

/** The questions as read for one revision of the store. */
interface Listing {
  readonly revision: number
  /**
   * Every question in the hot folder (`QuestionStore.list`): all the open
   * ones and all an agent may still be owed, which is what the queue and
   * runs views look questions up in.
   */
  readonly questions: ReadonlyArray<Question>
  /** Open questions, newest first. */
  readonly openQuestions: ReadonlyArray<Question>
  /** The first page of settled history, newest first. */
  readonly history: ReadonlyArray<Question>
  readonly next: string | null
  readonly open: number
  /** Open and not waiting on the agent: the badge. */
  readonly needsOwner: number
}

export interface Snapshot extends Listing {
  /** `GET /api/questions` (`QuestionList`), serialised and encoded once per revision and holders. */
  readonly body: Uint8Array
  /** The same, gzipped: a thousand questions are a megabyte, a phone on a train link wants 1/20 of it. */
  readonly gzipped: Uint8Array
  /**
   * The body's entity tag (a hash of its bytes). A page refetches on every
   * change event, most of which (a run, the queue, the first event on
   * connecting) leave the list as it was: it sends this back and is answered
   * `304` with no body, and draws nothing.
   */
  readonly etag: string
}

const listing = (
  revision: number,
  hot: ReadonlyArray<Question>,
  page: { readonly questions: ReadonlyArray<Question>; readonly next: string | null }
): Listing => {
  const open = hot.filter(Q.isOpen)
  return {
    revision,
    questions: hot,
    openQuestions: open,
    history: page.questions,
    next: page.next,
    open: open.length,
    needsOwner: open.filter((q) => !Q.waitingOnAgent(q)).length
  }
}

/** Every question a listing shows. */
const shown = (l: Listing) => [...l.openQuestions, ...l.history]

/** Who holds each question that may be held, at one instant; absent means `nobody`. */
type Holders = ReadonlyMap<string, Holder>

/** Questions whose resume waits for room on a host, with the words said of each (`Hosts.queuedQuestions`). */
type Queued = ReadonlyMap<string, string>

/** What a rendering depends on beyond the listing: who holds each question, and which wait for room. */
interface Around {
  readonly holders: Holders
  readonly queued: Queued
  /** What each question's run is for, by run id, as far as known. */
  readonly titles: ReadonlyMap<string, string | null>
}

/** One string per set of holders, queue and run titles known, to tell whether any changed. */
const holdersKey = ({ holders, queued, titles }: Around): string =>
  [...holders].filter(([, h]) => h !== "nobody").map(([id, h]) => `${id}=${h}`).join(",") + "|" + [...queued].map(([id, w]) => `${id}=${w}`).join(",") +
  "|" + titles.size

/** Which page of history: older than `before`, at most `limit`, matching every one of `words`. */
export interface HistoryOptions {
  readonly before?: string | undefined
  readonly limit: number
  readonly words: ReadonlyArray<string>
}

/** A history page's body as sent. */
export interface RenderedPage {
  readonly body: Uint8Array
  readonly gzipped: Uint8Array
}

/**
 * History pages kept, across cursors and searches: the first few pages are
 * what every phone scrolls through after each change; the rest is rare
 * enough to read again.
 */
const HISTORY_PAGES_KEPT = 32

const render = (from: Listing, { holders, queued, titles }: Around): Snapshot => {
  const viewed = (q: Question) => listed(view(q, holders.get(q.id) ?? "nobody", queued.get(q.id) ?? null, titles.get(q.run) ?? null))
  const list: QuestionList = { open: from.openQuestions.map(viewed), history: from.history.map(viewed), next: from.next }
  const body = Buffer.from(JSON.stringify(list), "utf8")
  // Level 6 (zlib's default): a megabyte in ~15 ms, once per change.
  const etag = `"${NodeCrypto.createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`
  return { ...from, body, gzipped: NodeZlib.gzipSync(body), etag }
}

export class Snapshots extends Context.Tag("magi/web/Snapshots")<
  Snapshots,
  {
    /** The list as it is now: cached when neither the store nor any holder has moved. */
    readonly current: Effect.Effect<Snapshot, StoreError>
    /** The counts and revision only, with no holder looked up: what `/api/health` says. */
    readonly counts: Effect.Effect<Pick<Snapshot, "revision" | "open" | "needsOwner">, StoreError>
    /** One question as the API shows it, its holder read now: what a write answers with. */
    readonly viewOf: (q: Question) => Effect.Effect<QuestionView>
    /**
     * A page of history (`GET /api/questions/history`) serialised, plain and
     * gzipped: read from the store once per revision and page, rendered once
     * per set of holders.
     */
    readonly historyPage: (options: HistoryOptions) => Effect.Effect<RenderedPage, StoreError>
    /**
     * The holders of the questions last listed, as one comparable string. A
     * stale lease changes no file, so `Live` polls this to tell open pages
     * that "the agent is waiting" stopped being true. Empty before any list.
     */
    readonly holders: Effect.Effect<string>
  }
>() {
  static layer = Layer.effect(
    Snapshots,
    Effect.gen(function* () {
      const store = yield* QuestionStore
      const leases = yield* Leases
      // The hosts' records say which resumes wait for room; a server with no hosts (a test's) has none.
      const hosts = yield* Effect.serviceOption(Hosts)
      // A run's instruction never changes, so its title is read once per run;
      // a read that fails is tried again on the next listing, never taken for "no title".
      const runs = yield* Effect.serviceOption(RunStore)
      const titles = new Map<string, string | null>()
      const learnTitles = (questions: ReadonlyArray<Question>) =>
        Option.match(runs, {
          onNone: () => Effect.void,
          onSome: (store) =>
            Effect.forEach(
              [...new Set(questions.map((q) => q.run))].filter((run) => run !== "" && !titles.has(run)),
              (run) =>
                store.get(run).pipe(
                  Effect.tap((r) => Effect.sync(() => titles.set(run, r.id === run ? runTitle(r.instruction) : null))),
                  Effect.catchTag("RecordNotFound", () => Effect.sync(() => titles.set(run, null))),
                  // fallback: the snapshot is a view; a refresh that failed is retried
                  Effect.ignore
                ),
              { concurrency: 4, discard: true }
            )
        })
      const queuedNow: Effect.Effect<Queued> = Option.match(hosts, {
        onNone: () => Effect.succeed(new Map()),
        // display: queued questions on the page; none when they cannot be read
        onSome: (h) => h.list.pipe(Effect.map(queuedQuestions), Effect.orElseSucceed((): Queued => new Map()))
      })
      /** The last listing whose revision is old enough to trust on sight. */
      const settled = yield* Ref.make(Option.none<Listing>())
      /** The last listing built, and its build's sequence number. */
      const latest = yield* Ref.make(Option.none<{ readonly snapshot: Listing; readonly seq: number }>())
      /** How many builds have started. */
      const started = yield* Ref.make(0)
      // One build at a time. A request that finds one running waits for the
      // next and shares it: right after a change every open page refetches at
      // once, inside the racy window, and fifty pages must cost two reads of
      // the store, not fifty.
      const building = yield* Effect.makeSemaphore(1)

      const rebuild = (arrival: number) =>
        building.withPermits(1)(
          Effect.gen(function* () {
            // A build that started after this request arrived saw every write
            // the request could know about.
            const shared = Option.filter(yield* Ref.get(latest), (l) => l.seq > arrival)
            if (Option.isSome(shared)) return shared.value.snapshot
            const seq = yield* Ref.updateAndGet(started, (n) => n + 1)
            const startedAt = yield* Clock.currentTimeMillis
            const revision = yield* store.revision
            const snapshot = listing(revision, yield* store.list, yield* store.historyPage({ limit: HISTORY_PAGE }))
            yield* Ref.set(latest, Option.some({ snapshot, seq }))
            const old = revision > 0 && Memo.trusted(revision, startedAt)
            yield* Ref.set(settled, old ? Option.some(snapshot) : Option.none())
            return snapshot
          })
        )

      const currentListing = Effect.gen(function* () {
        const revision = yield* store.revision
        const hit = Option.filter(yield* Ref.get(settled), (s) => s.revision === revision)
        if (Option.isSome(hit)) return hit.value
        return yield* rebuild(yield* Ref.get(started))
      })

      const holderOf = (q: Question, now: Date) =>
        mayBeHeld(q) ? Effect.map(leases.read(q.id), (lease) => Lease.holder(lease, now)) : Effect.succeed("nobody" as const)

      // One look at the leases (and the hosts) for the whole list, never one per question.
      const holdersOf = (questions: ReadonlyArray<Question>) =>
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* learnTitles(questions)
          const byId = yield* leases.all
          const held = questions
            .filter(mayBeHeld)
            .map((q) => [q.id, Lease.holder(Option.fromNullable(byId.get(q.id)), now)] as const)
          const waiting = yield* queuedNow
          const shown = new Set(questions.map((q) => q.id))
          return { holders: new Map(held), queued: new Map([...waiting].filter(([id]) => shown.has(id))), titles: new Map(titles) } satisfies Around
        })

      /** The last rendering, for the listing object and holders it was made from. */
      const rendered = yield* Ref.make(Option.none<{ readonly from: Listing; readonly key: string; readonly snapshot: Snapshot }>())
      // As with building: fifty pages refetching at once serialise once.
      const rendering = yield* Effect.makeSemaphore(1)

      const current = Effect.gen(function* () {
        const from = yield* currentListing
        const holders = yield* holdersOf(shown(from))
        const key = holdersKey(holders)
        return yield* rendering.withPermits(1)(
          Effect.gen(function* () {
            const last = Option.filter(yield* Ref.get(rendered), (r) => r.from === from && r.key === key)
            if (Option.isSome(last)) return last.value.snapshot
            const snapshot = render(from, holders)
            yield* Ref.set(rendered, Option.some({ from, key, snapshot }))
            return snapshot
          })
        )
      })

      const viewOf = (q: Question) =>
        Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms)).pipe(
          Effect.flatMap((now) => holderOf(q, now)),
          Effect.zip(queuedNow),
          Effect.zipLeft(learnTitles([q])),
          Effect.map(([holder, queued]) => view(q, holder, queued.get(q.id) ?? null, titles.get(q.run) ?? null))
        )

      const holders = Effect.gen(function* () {
        const last = yield* Ref.get(latest)
        if (Option.isNone(last)) return ""
        return holdersKey(yield* holdersOf(shown(last.value.snapshot)))
      })

      // A page is a query and thirty decodes on PostgreSQL (a shelf's read on
      // files): under twenty phones scrolling it was most of the server's
      // work. Kept while the store's revision stands, as the list is.
      const pages = Memo.make<{ readonly questions: ReadonlyArray<Question>; readonly next: string | null }>(HISTORY_PAGES_KEPT)
      const pageRenders = new WeakMap<object, { readonly key: string; readonly page: RenderedPage }>()
      const historyPage = (options: HistoryOptions) =>
        Effect.gen(function* () {
          const key = JSON.stringify([options.before ?? null, options.limit, options.words])
          const page = yield* pages.get(key, store.revision, store.historyPage(options))
          const held = yield* holdersOf(page.questions)
          const heldKey = holdersKey(held)
          const last = pageRenders.get(page)
          if (last !== undefined && last.key === heldKey) return last.page
          const views = page.questions.map((q) =>
            listed(view(q, held.holders.get(q.id) ?? "nobody", held.queued.get(q.id) ?? null, held.titles.get(q.run) ?? null))
          )
          const body = Buffer.from(JSON.stringify({ history: views, next: page.next }), "utf8")
          const rendered: RenderedPage = { body, gzipped: NodeZlib.gzipSync(body) }
          pageRenders.set(page, { key: heldKey, page: rendered })
          return rendered
        })

      return { current, counts: currentListing, viewOf, holders, historyPage }
    })
  )
}
