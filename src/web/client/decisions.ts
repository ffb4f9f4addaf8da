/**
 * A decision tapped on the phone, from the tap to the card leaving the open
 * list: what makes a mis-tap harmless and keeps every other card still.
 *
 * A tap does not send. The card stays where it is and shows what is being
 * decided, with Undo, for `UNDO_MS`; then the answer is sent (at once if the
 * page is being hidden or closed: a decision the owner saw held must not be
 * lost to a closed tab); then the card shows what was decided for
 * `DECIDED_MS`, and only then leaves the open list. While any of that runs
 * the open list is frozen: no card is added above, none removed, none
 * reordered, so nothing moves under the finger that might tap Undo. New
 * questions that arrive meanwhile are counted and shown once it ends.
 *
 * Pure bookkeeping plus timers; the page says how to send and how to redraw.
 */
import type { QuestionView } from "./api.js"

/**
 * How long a tapped decision waits before it is sent: long enough to read
 * "Sending ‘Redis’" and reach Undo after a mis-tap (mail clients' undo-send
 * uses the same 5 s by default), short enough that an agent waiting on the
 * answer hardly notices.
 */
export const UNDO_MS = 5_000

/**
 * How long a sent decision stays in place showing what was decided before it
 * leaves the open list: time to read one confirming line, so the card does
 * not vanish the instant the owner looks back at it.
 */
export const DECIDED_MS = 2_500

export type Given = { readonly choice: string } | { readonly text: string }

export const givenText = (given: Given): string => ("choice" in given ? given.choice : given.text)

/** Where one tapped decision is. */
export type Decision =
  | { readonly state: "holding"; readonly given: Given; readonly deadline: number }
  | { readonly state: "sending"; readonly given: Given }
  | { readonly state: "decided"; readonly given: Given }

export interface DecisionsOptions {
  /** Send the answer; `keepalive` when the page is going away (the request must outlive it). */
  readonly send: (id: string, given: Given, keepalive: boolean) => Promise<QuestionView>
  /** The server took it: the page records the updated question. */
  readonly sent: (updated: QuestionView, given: Given) => void
  /** It did not: the page says why, next to the control, and keeps the draft. */
  readonly failed: (q: QuestionView, given: Given, error: unknown) => void
  readonly redraw: () => void
}

export const decisions = (options: DecisionsOptions) => {
  const current = new Map<string, Decision>()
  const timers = new Map<string, ReturnType<typeof setTimeout>>()
  const asked = new Map<string, QuestionView>()
  /** The open list as last drawn, and as frozen while a decision runs. */
  let lastShown: ReadonlyArray<QuestionView> = []
  let frozen: ReadonlyArray<QuestionView> | undefined

  const clear = (id: string) => {
    const timer = timers.get(id)
    if (timer !== undefined) clearTimeout(timer)
    timers.delete(id)
  }

  const end = (id: string) => {
    clear(id)
    current.delete(id)
    asked.delete(id)
    options.redraw()
  }

  const send = (id: string, keepalive: boolean) => {
    const decision = current.get(id)
    const q = asked.get(id)
    if (decision?.state !== "holding" || q === undefined) return
    clear(id)
    const { given } = decision
    current.set(id, { state: "sending", given })
    options.redraw()
    options.send(id, given, keepalive).then(
      (updated) => {
        current.set(id, { state: "decided", given })
        options.sent(updated, given)
        options.redraw()
        timers.set(id, setTimeout(() => end(id), DECIDED_MS))
      },
      (error: unknown) => {
        clear(id)
        current.delete(id)
        asked.delete(id)
        options.failed(q, given, error)
        options.redraw()
      }
    )
  }

  return {
    of: (id: string): Decision | undefined => current.get(id),

    /** The owner tapped `given` on `q`: hold it for `UNDO_MS`. */
    start: (q: QuestionView, given: Given, now: number) => {
      if (current.has(q.id)) return
      asked.set(q.id, q)
      current.set(q.id, { state: "holding", given, deadline: now + UNDO_MS })
      timers.set(q.id, setTimeout(() => send(q.id, false), UNDO_MS))
      options.redraw()
    },

    /** Undo: nothing was sent; the card is back as it was, draft and all. */
    undo: (id: string) => {
      if (current.get(id)?.state !== "holding") return
      end(id)
    },

    /**
     * Someone else settled `id` while its decision was held: nothing is
     * sent (the server would refuse it), and the page says what happened.
     */
    cancel: (id: string) => {
      if (current.get(id)?.state !== "holding") return
      // Called while the page draws: it redraws anyway, so no redraw here.
      clear(id)
      current.delete(id)
      asked.delete(id)
    },

    /** The page is being hidden or closed: send every held decision now. */
    flush: () => {
      for (const [id, d] of current) if (d.state === "holding") send(id, true)
    },

    /**
     * The open list to draw, given the questions that are open now. Frozen
     * (the same cards, in the same order, each as it is now or as last seen)
     * while any decision runs; `held` counts the new ones kept back.
     */
    openList: (all: ReadonlyArray<QuestionView>, open: ReadonlyArray<QuestionView>) => {
      if (current.size === 0) frozen = undefined
      else frozen ??= lastShown
      let shown: ReadonlyArray<QuestionView> = open
      let held = 0
      if (frozen !== undefined) {
        const byId = new Map(all.map((q) => [q.id, q]))
        const kept = new Set(frozen.map((q) => q.id))
        shown = frozen.map((q) => byId.get(q.id) ?? q)
        held = open.filter((q) => !kept.has(q.id)).length
        // As last seen: a refetch that no longer carries a settled one
        // (it is in history, on a page not loaded) keeps it as it was drawn.
        frozen = shown
      }
      lastShown = shown
      return { shown, held }
    }
  }
}

export type Decisions = ReturnType<typeof decisions>
