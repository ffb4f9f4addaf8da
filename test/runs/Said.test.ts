import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as Said from "../../src/runs/Said.js"
import type { RunStatus } from "../../src/runs/RunStatus.js"

const now = new Date("2026-12-04T18:00:00Z")
const run = (over: Partial<Said.RunView> & { host?: string; competition?: unknown } = {}) => ({
  id: "20261204-180000-ab12",
  status: "running" as RunStatus,
  seats: [{ key: "impl" }, { key: "judge-1" }],
  said: [] as ReadonlyArray<Said.SaidWord>,
  ...over
})
const word = (n: number, over: Partial<Said.SaidWord> = {}): Said.SaidWord => ({
  n,
  seat: "impl",
  text: `word ${n}`,
  at: "2026-12-04T17:00:00Z",
  state: "queued",
  ...over
})

describe("the delivery rule: a word is given to one turn only", () => {
  it.each(
    [
      ["nothing queued", [], "impl", [], []],
      ["one queued", [word(1)], "impl", [1], [1]],
      ["two queued, in order", [word(2), word(1)], "impl", [2, 1], [1, 2]],
      ["another seat's word stays", [word(1, { seat: "judge-1" }), word(2)], "impl", [2], [2]],
      ["a cancelled word is never given", [word(1, { state: "cancelled" }), word(2)], "impl", [2], [2]],
      ["a delivered word is never given again", [word(1, { state: "delivered", turn: 3 })], "impl", [], [1]],
      ["a refused word stays refused", [word(1, { state: "refused", why: "no session" })], "impl", [], []]
    ] as const
  )("%s", (_name, said, seat, taken, deliveredAfter) => {
    const took = Said.take(said, seat, 4, now)
    expect(took.taken.map((w) => w.n)).toEqual(taken)
    expect(took.said.filter((w) => w.state === "delivered").map((w) => w.n).sort()).toEqual([...deliveredAfter].sort())
    for (const w of took.taken) expect(w).toMatchObject({ state: "delivered", turn: 4, delivered_at: "2026-12-04T18:00:00Z" })
  })

  it("taken again after a kill and a restart (the same record read back), gives nothing", () => {
    const first = Said.take([word(1), word(2)], "impl", 4, now)
    const again = Said.take(first.said, "impl", 5, now)
    expect(again.taken).toEqual([])
    expect(again.said).toEqual(first.said)
  })

  it("an edited word is given with its new text", () => {
    const edited = Either.getOrThrow(Said.change(run({ said: [word(1)] }), 1, "the new words", now))
    expect(Said.take(edited, "impl", 2, now).taken.map((w) => w.text)).toEqual(["the new words"])
  })
})

describe("saying, editing and cancelling", () => {
  it.each(
    [
      ["a running run queues it", run(), "impl", "hi", Either.right(1)],
      ["a done run takes it", run({ status: "done" }), "impl", "hi", Either.right(1)],
      ["numbers go on from the highest", run({ said: [word(1), word(7, { state: "delivered" })] }), "impl", "hi", Either.right(8)],
      ["an unknown seat", run(), "impl-Z", "hi", Either.left('run ab12 has no seat "impl-Z" (its seats: impl, judge-1)')],
      ["a seat that is a path", run(), "../etc", "hi", Either.left('run ab12 has no seat "../etc" (its seats: impl, judge-1)')],
      ["empty words", run(), "impl", "  ", Either.left('the words are empty; say something, in quotes: magi say ID "…"')],
      [
        "a merged run",
        run({ status: "merged" }),
        "impl",
        "hi",
        Either.left("run ab12 is merged; it is over, so no seat of it takes words (start a new run with magi run)")
      ],
      [
        "a removed run",
        run({ status: "done", removed_at: "2026-12-04T17:00:00Z" }),
        "impl",
        "hi",
        Either.left(
          "run ab12 was removed (its worktree and branch are gone), so no seat of it can be resumed"
        )
      ]
    ] as const
  )("%s", (_name, r, seat, text, expected) => {
    const got = Said.add(r, seat, text, now)
    expect(Either.map(got, (g) => g.word.n)).toEqual(expected)
    if (Either.isRight(got)) expect(got.right.said.at(-1)).toMatchObject({ seat, text, state: "queued", at: "2026-12-04T18:00:00Z" })
  })

  it("refuses words over the size cap and more than 20 waiting", () => {
    expect(Either.isLeft(Said.add(run(), "impl", "x".repeat(Said.SAID_MAX_CHARS + 1), now))).toBe(true)
    const full = run({ said: Array.from({ length: Said.MAX_QUEUED }, (_, i) => word(i + 1)) })
    expect(Said.add(full, "impl", "one more", now)).toEqual(
      Either.left("run ab12 already has 20 words waiting; edit one (--edit N) or wait for them to be delivered")
    )
  })

  it.each(
    [
      ["edits a queued word", [word(1)], 1, "new", Either.right("new")],
      ["cancels a queued word", [word(1)], 1, undefined, Either.right("cancelled")],
      [
        "refuses a delivered one",
        [word(1, { state: "delivered", turn: 2 })],
        1,
        "new",
        Either.left(
          "word 1 was already given to seat impl in its turn 2; say something new instead"
        )
      ],
      ["refuses a cancelled one", [word(1, { state: "cancelled" })], 1, undefined, Either.left("word 1 is cancelled; say something new instead")],
      ["refuses an unknown number", [word(1)], 3, "new", Either.left("run ab12 has no word 3 (magi show ab12 lists them)")]
    ] as const
  )("%s", (_name, said, n, text, expected) => {
    const got = Said.change(run({ said }), n, text, now)
    expect(Either.map(got, (s) => (text === undefined ? s[0]!.state : s[0]!.text))).toEqual(expected)
  })
})

describe("which seat the loop starts a turn for", () => {
  const busy = new Set<string>()
  it.each(
    [
      ["a done run with a word", run({ status: "done", said: [word(1)] }), "h1", busy, ["impl"]],
      ["a waiting run", run({ status: "waiting", said: [word(1)] }), "h1", busy, ["impl"]],
      ["a running run waits for its turn to end", run({ status: "running", said: [word(1)] }), "h1", busy, []],
      ["a seat whose lock is held", run({ status: "done", said: [word(1)] }), "h1", new Set(["impl"]), []],
      ["another host's run", run({ status: "done", said: [word(1)], host: "h2" }), "h1", busy, []],
      ["a run recorded before hosts", run({ status: "done", said: [word(1)] }), "h1", busy, ["impl"]],
      ["nothing queued", run({ status: "done", said: [word(1, { state: "delivered" })] }), "h1", busy, []],
      ["a competition mid-way", run({ status: "waiting", said: [word(1)], competition: {} }), "h1", busy, []],
      ["a competition that is done", run({ status: "done", said: [word(1)], competition: {} }), "h1", busy, ["impl"]],
      ["a run landed", run({ status: "merged", said: [word(1)] }), "h1", busy, []]
    ] as const
  )("%s", (_name, r, self, b, expected) => {
    expect(Said.toStart(r, self, b)).toEqual(expected)
  })
})
