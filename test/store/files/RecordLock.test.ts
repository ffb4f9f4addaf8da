/**
 * The per-record lock under the race that broke it: many writers arriving at
 * once on a lock a killed writer left behind. Each writer is its own store
 * over the same real folder, so they meet only on the files, as separate
 * processes do.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../../src/questions/Question.js"
import * as QuestionStore from "../../../src/questions/QuestionStore.js"
import { tempDir } from "../../support.js"

/** `MAGI_RACE_ROUNDS` shortens the loop while working on the lock; the suite runs all 200. */
const ROUNDS = Number(process.env.MAGI_RACE_ROUNDS ?? 200)
const WRITERS = 20
/** Rounds run side by side, each on its own question. */
const ROUNDS_AT_ONCE = 4
/** Of the writers, this many speak back (`--say`) instead of answering. */
const SAYERS = 5

describe("the record lock over a lock left by a crash", () => {
  it.scopedLive(
    `gives exactly one acknowledged winner, on disk, in every one of ${ROUNDS} rounds of ${WRITERS} writers`,
    () =>
      Effect.gen(function* () {
        const base = yield* tempDir
        const root = NodePath.join(base, "questions")
        const stores = yield* Effect.forEach(Array.from({ length: WRITERS }), () => QuestionStore.make(root))
        const choices = Array.from({ length: WRITERS }, (_, k) => `w${k}`)
        let badRounds = 0
        let acknowledged = 0
        let lost = 0
        // Rounds are independent (one question each), so a few run side by
        // side; within a round all twenty writers race on the one lock.
        yield* Effect.forEach(Array.from({ length: ROUNDS }, (_, round) => round), (round) =>
          Effect.gen(function* () {
            const id = `20260101-000000-${round.toString(16).padStart(4, "0")}`
            yield* stores[0]!.put(
              Q.make({ id, run: "r", node: "n", seat: "s", summary: "Pick one", detail: "", choices, now: new Date() })
            )
            // Left by a writer killed mid-update a minute ago.
            const lock = NodePath.join(root, `${id}.lock`)
            NodeFs.writeFileSync(lock, "99999 killed\n")
            const past = new Date(Date.now() - 60_000)
            NodeFs.utimesSync(lock, past, past)

            const results = yield* Effect.forEach(
              stores,
              (store, k) => {
                const now = new Date()
                const write = k < SAYERS
                  ? store.update(id, (q) => Q.say(q, `word ${k}`, now))
                  : store.update(id, (q) => Q.answer(q, { choice: `w${k}` }, now))
                return Effect.either(write).pipe(Effect.map((r) => ({ k, ok: Either.isRight(r) })))
              },
              { concurrency: "unbounded" }
            )
            const onDisk = JSON.parse(NodeFs.readFileSync(NodePath.join(root, `${id}.json`), "utf8")) as Q.Question
            const winners = results.filter((r) => r.ok && r.k >= SAYERS)
            const said = results.filter((r) => r.ok && r.k < SAYERS)
            acknowledged += winners.length + said.length
            const answerKept = winners.length === 1 && onDisk.status === "answered" && (onDisk.answer as { choice: string }).choice === `w${winners[0]!.k}`
            const wordsKept = said.filter((r) => onDisk.thread.some((t) => t.body === `word ${r.k}`))
            lost += (winners.length > 0 && !answerKept ? winners.length : 0) + (said.length - wordsKept.length)
            if (!answerKept || wordsKept.length !== said.length) badRounds++
          }), { concurrency: ROUNDS_AT_ONCE, discard: true })
        // Nothing left behind: no lock, no break marker, no scratch.
        const leftovers = NodeFs.readdirSync(root).filter((n) => !n.endsWith(".json"))
        console.log(`record lock race: ${ROUNDS} rounds x ${WRITERS} writers, ${acknowledged} acknowledged writes, ${lost} lost, ${badRounds} bad rounds`)
        expect({ badRounds, lost, leftovers }).toEqual({ badRounds: 0, lost: 0, leftovers: [] })
      }).pipe(Effect.provide(NodeFileSystem.layer)),
    600_000
  )
})
