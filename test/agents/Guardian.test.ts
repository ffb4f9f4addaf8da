/** Reading `/proc/<pid>/stat` for the fields that tell an agent's process from a reused pid. */
import { describe, expect, it } from "vitest"
import { Option } from "effect"
import { parseStat } from "../../src/agents/Guardian.js"

const tail = "1 4242 4242 0 -1 4194304 2416 0 0 0 6 0 0 0 20 0 11 0 437507 779808768"

describe("parseStat", () => {
  it.each([
    ["a plain name", `4242 (node) S ${tail}`, Option.some({ pid: 4242, pgrp: 4242, start: 437507 })],
    ["a name with spaces and a parenthesis", `4242 (my agent) x) R ${tail}`, Option.some({ pid: 4242, pgrp: 4242, start: 437507 })],
    ["a zombie, which has ended", `4242 (node) Z ${tail}`, Option.none()],
    ["a line cut short", "4242 (node) S 1 4242", Option.none()],
    ["nothing", "", Option.none()]
  ])("%s", (_what, text, expected) => {
    expect(parseStat(4242, text)).toEqual(expected)
  })
})
