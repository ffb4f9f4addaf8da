import { describe, expect, it } from "vitest"
import type { Check, Observation, Remark } from "../../src/land/Forge.js"
import * as L from "../../src/land/LandDecide.js"

const SHA = "a".repeat(40)
const T0 = 1_000_000_000

const check = (name: string, outcome: Check["outcome"], conclusion: string = outcome): Check => ({
  name,
  source: "check_run",
  outcome,
  conclusion,
  jobId: 7,
  url: ""
})
const remark = (over: Partial<Remark>): Remark => ({
  id: 1,
  kind: "review_comment",
  author: "alice",
  authorKind: "human",
  mine: false,
  verdict: "",
  body: "please rename",
  resolved: false,
  path: "src/a.ts",
  ...over
})

const obs = (over: {
  state?: Observation["pr"]["state"]
  headSha?: string
  mergeable?: Observation["mergeable"]
  checks?: ReadonlyArray<Check> | string
  remarks?: ReadonlyArray<Remark>
} = {}): Observation => ({
  pr: { number: 5, url: "", head: "magi/x", base: "main", headSha: over.headSha ?? SHA, state: over.state ?? "open" },
  mergeable: over.mergeable ?? "mergeable",
  checks: typeof over.checks === "string"
    ? { _tag: "Unreadable", reason: over.checks }
    : { _tag: "Read", checks: over.checks ?? [check("test", "success")] },
  remarks: over.remarks ?? []
})

const state = (over: Partial<L.LandState> = {}): L.LandState => ({
  pushedSha: SHA,
  roundsUsed: 0,
  checksMissingSince: null,
  waitingSince: T0,
  approved: false,
  now: T0 + 60_000,
  ...over
})

const green = [check("test", "success"), check("lint", "success")]
const red = [check("test", "failure"), check("lint", "success")]

type Row = readonly [string, Observation, L.LandState, L.LandSettings, L.LandAction["_tag"]]
const S = L.defaultSettings

const rows: ReadonlyArray<Row> = [
  ["merged by someone else ends merged", obs({ state: "merged", headSha: "b".repeat(40) }), state(), S, "ended"],
  ["closed by someone else ends closed", obs({ state: "closed" }), state(), S, "ended"],
  ["a head magi did not push is held (force-push)", obs({ headSha: "b".repeat(40) }), state(), S, "held"],
  ["conflicts with its base: rebase", obs({ mergeable: "conflicting", checks: red }), state(), S, "rebase"],
  ["conflicts past the rounds: give up", obs({ mergeable: "conflicting" }), state({ roundsUsed: 4 }), S, "give_up"],
  ["checks pending: wait", obs({ checks: [check("test", "pending"), check("lint", "success")] }), state(), S, "wait"],
  [
    "checks pending past land_wait: give up",
    obs({ checks: [check("test", "pending")] }),
    state({ now: T0 + L.DEFAULT_LAND_WAIT_MS }),
    S,
    "give_up"
  ],
  ["a shorter land_wait is honoured", obs({ checks: [check("test", "pending")] }), state({ now: T0 + 10 * 60_000 }), { ...S, waitMs: 5 * 60_000 }, "give_up"],
  ["no checks yet, first seen now: wait", obs({ checks: [] }), state(), S, "wait"],
  ["no checks for under 3 minutes: still wait", obs({ checks: [] }), state({ checksMissingSince: T0, now: T0 + 179_000 }), S, "wait"],
  ["no checks for 3 minutes: believed none, green", obs({ checks: [] }), state({ checksMissingSince: T0, now: T0 + 180_000 }), S, "ask_approval"],
  ["checks that cannot be read: never merge", obs({ checks: "HTTP 500" }), state({ approved: true }), S, "never_merge"],
  ["red: a fix round", obs({ checks: red }), state(), S, "fix"],
  ["red and pending together: fix without waiting", obs({ checks: [check("test", "failure"), check("e2e", "pending")] }), state(), S, "fix"],
  ["red past land_rounds: give up, PR left open", obs({ checks: red }), state({ roundsUsed: 4 }), S, "give_up"],
  ["green with an unresolved human review comment: fix", obs({ checks: green, remarks: [remark({})] }), state(), S, "fix"],
  ["a human's changes requested: fix", obs({ remarks: [remark({ kind: "review", verdict: "CHANGES_REQUESTED", path: null })] }), state(), S, "fix"],
  ["a resolved (outdated) review comment is not work", obs({ remarks: [remark({ resolved: true })] }), state(), S, "ask_approval"],
  [
    "a bot's conversation note is not work",
    obs({ remarks: [remark({ kind: "issue_comment", authorKind: "bot", author: "codecov[bot]", path: null })] }),
    state(),
    S,
    "ask_approval"
  ],
  [
    "a bot's review verdict is not work",
    obs({ remarks: [remark({ kind: "review", authorKind: "bot", verdict: "CHANGES_REQUESTED" })] }),
    state(),
    S,
    "ask_approval"
  ],
  ["magi's own comment is not work", obs({ remarks: [remark({ mine: true })] }), state(), S, "ask_approval"],
  ["unresolved comments past land_rounds: give up", obs({ remarks: [remark({})] }), state({ roundsUsed: 4 }), S, "give_up"],
  ["green and clean: ask the owner", obs({ checks: green }), state(), S, "ask_approval"],
  ["green, clean and approved: merge", obs({ checks: green }), state({ approved: true }), S, "merge"],
  ["green and clean without land_approval: merge", obs({ checks: green }), state(), { ...S, approval: false }, "merge"],
  ["green but mergeability not computed yet: wait", obs({ mergeable: "unknown" }), state({ approved: true }), S, "wait"]
]

describe("LandDecide.decide", () => {
  it.each(rows)("%s", (_name, observation, st, settings, tag) => {
    expect(L.decide(observation, st, settings)._tag).toBe(tag)
  })

  it("ends with the outcome the forge shows", () => {
    expect(L.decide(obs({ state: "merged" }), state(), S)).toEqual({ _tag: "ended", outcome: "merged" })
    expect(L.decide(obs({ state: "closed" }), state(), S)).toEqual({ _tag: "ended", outcome: "closed" })
  })

  it("feeds the fix round the failing checks and the comments that ask for work", () => {
    const human = remark({ id: 2 })
    const action = L.decide(obs({ checks: red, remarks: [human, remark({ id: 3, mine: true })] }), state(), S)
    expect(action).toEqual({ _tag: "fix", failing: [red[0]], remarks: [human] })
  })

  it("remembers when checks were first missing, and keeps that time", () => {
    expect(L.decide(obs({ checks: [] }), state({ now: T0 + 5 }), S)).toMatchObject({ _tag: "wait", checksMissingSince: T0 + 5 })
    expect(L.decide(obs({ checks: [] }), state({ checksMissingSince: T0, now: T0 + 5 }), S)).toMatchObject({ checksMissingSince: T0 })
  })

  it("gives up saying what still fails", () => {
    const action = L.decide(obs({ checks: red, remarks: [remark({})] }), state({ roundsUsed: 4 }), S)
    expect(action).toEqual({ _tag: "give_up", reason: "after 4 rounds, still failing: test (failure); 1 review comment(s) unresolved" })
  })

  it("never answers anything but merge or ask_approval to merge, whatever the observation", () => {
    const merges = rows.filter(([, o, st, se]) => L.decide(o, st, se)._tag === "merge")
    for (const [, o] of merges) {
      expect(o.pr.state).toBe("open")
      expect(o.checks._tag).toBe("Read")
      expect(o.mergeable).toBe("mergeable")
    }
  })
})
