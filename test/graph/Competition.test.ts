/** The competition's record rules (issue 29): what a candidate becomes after implementing, and where the run goes next. */
import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as C from "../../src/runs/Competition.js"
import { decode, encode } from "../../src/runs/Runs.js"
import { sampleRun } from "../runSupport.js"
import { seatsFor, defaults } from "../../src/graph/GraphConfig.js"

const cand = (label: string, status: C.CandidateStatus = "pending"): C.Candidate => ({
  label,
  seat: `impl-${label}`,
  agent: "x",
  branch: `magi/ab12/${label}`,
  worktree: `/w/${label}`,
  status,
  commits: [],
  numstat: "",
  summary: "",
  dropped: "",
  checks: [],
  leaks: [],
  redacted: false,
  implement_ms: 0,
  fallback_from: []
})
const comp = (...cs: ReadonlyArray<C.Candidate>): C.Competition => ({
  seed: 1,
  step: "implement",
  candidates: cs,
  judges: [],
  deliberation: [],
  votes: [],
  tally: null,
  winner: null,
  keep_losers: false
})

describe("afterImplement", () => {
  it.each([
    { name: "commits keep it in", got: { commits: ["abc Add"], summary: "Did it", failed: null, baseMoved: null }, status: "viable", dropped: "" },
    {
      name: "a failed agent's commits still keep it in",
      got: { commits: ["abc Add"], summary: "", failed: "exit 1", baseMoved: null },
      status: "viable",
      dropped: ""
    },
    { name: "no commits drop it", got: { commits: [], summary: "Looked", failed: null, baseMoved: null }, status: "dropped", dropped: "it made no commits" },
    {
      name: "a failed turn with no commits drops it with the failure",
      got: { commits: [], summary: "", failed: "exit 1", baseMoved: null },
      status: "dropped",
      dropped: "exit 1"
    },
    {
      name: "NO CHANGE NEEDED is a noop",
      got: { commits: [], summary: "NO CHANGE NEEDED: it is there", failed: null, baseMoved: null },
      status: "noop",
      dropped: ""
    },
    {
      name: "moving the base drops it",
      got: { commits: ["abc"], summary: "", failed: null, baseMoved: "it moved the base" },
      status: "dropped",
      dropped: "it moved the base"
    }
  ])("$name", ({ got, status, dropped }) => {
    expect(C.afterImplement(cand("A"), got)).toMatchObject({ status, dropped })
  })

  it.each([
    { cs: [cand("A", "noop"), cand("B", "noop")], next: "verified_noop", winner: null },
    { cs: [cand("A", "noop"), cand("B", "dropped")], next: "failed", winner: null },
    { cs: [cand("A", "dropped"), cand("B", "viable")], next: "fold", winner: "B" },
    { cs: [cand("A", "viable"), cand("B", "viable")], next: "checks", winner: null }
  ])("goes on to $next", ({ cs, next, winner }) => {
    expect(C.afterAllImplemented(comp(...cs))).toEqual({ next, winner })
  })
})

describe("the run record", () => {
  it("reads a schema 1 run (no competition) and round-trips a competition", () => {
    const old = { ...sampleRun("20261201-101010-ab12"), schema: 1 }
    const read = decode(JSON.stringify(old), "run.json")
    expect(Either.isRight(read) && read.right.competition).toBeUndefined()
    const withComp = { ...sampleRun("20261201-101010-ab12"), competition: comp(cand("A", "viable")) }
    const back = decode(encode(withComp), "run.json")
    expect(Either.isRight(back) && back.right.competition?.candidates[0]?.status).toBe("viable")
  })
})

describe("seatsFor", () => {
  it.each([
    { name: "a roster of three", roster: ["a", "b", "c"], over: {}, solo: false, candidates: 3 },
    { name: "--solo", roster: ["a", "b", "c"], over: {}, solo: true, candidates: 1 },
    { name: "a one-agent roster", roster: ["a"], over: { candidates: 3 }, solo: false, candidates: 1 },
    { name: "candidates = 1", roster: ["a", "b"], over: { candidates: 1 }, solo: false, candidates: 1 },
    { name: "[roles] implementer", roster: ["a", "b"], over: { implementer: "a" }, solo: false, candidates: 1 },
    { name: "the conductor is not an implementer", roster: ["a", "boss"], over: { conductor: "boss" }, solo: false, candidates: 1 },
    { name: "candidates = 4 over two agents", roster: ["a", "b"], over: { candidates: 4 }, solo: false, candidates: 4 }
  ])("$name: $candidates", ({ roster, over, solo, candidates }) => {
    expect(seatsFor({ ...defaults, ...over }, roster, solo).candidates).toBe(candidates)
  })
})
