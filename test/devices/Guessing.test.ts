/** Guessing.ts's rules as tables: who is guessing, and when a guess is refused, counted and given back. */
import { describe, expect, it } from "vitest"
import * as Device from "../../src/devices/Device.js"
import * as Guessing from "../../src/devices/Guessing.js"

describe("clientAddress", () => {
  it.each([
    { peer: "203.0.113.7", xff: undefined, is: "203.0.113.7" },
    // A client reaching magi directly cannot choose its address.
    { peer: "203.0.113.7", xff: "198.51.100.1", is: "203.0.113.7" },
    { peer: "::ffff:203.0.113.7", xff: undefined, is: "203.0.113.7" },
    // A proxy on this machine: the address it adds, the last one.
    { peer: "127.0.0.1", xff: "198.51.100.1", is: "198.51.100.1" },
    { peer: "::1", xff: "6.6.6.6, 198.51.100.1", is: "198.51.100.1" },
    { peer: "::ffff:127.0.0.1", xff: " , ", is: "127.0.0.1" },
    { peer: "127.0.0.1", xff: undefined, is: "127.0.0.1" },
    { peer: undefined, xff: "198.51.100.1", is: "unknown" }
  ])("peer $peer, X-Forwarded-For $xff → $is", ({ peer, xff, is }) => {
    expect(Guessing.clientAddress(peer, xff)).toBe(is)
  })
})

describe("reserve and refund", () => {
  const counters = Guessing.countersFor("203.0.113.7")
  const count = (id: string, failures: number, window_start = 0): Device.Guesses => ({ schema: 1, id, window_start, failures })
  const [address, overall] = [counters[0]!.id, counters[1]!.id]

  it.each([
    { stored: [undefined, undefined], now: 5, is: { _tag: "Counted", next: [count(address, 1, 5), count(overall, 1, 5)] } },
    { stored: [count(address, 9), count(overall, 50)], now: 5, is: { _tag: "Counted", next: [count(address, 10), count(overall, 51)] } },
    { stored: [count(address, 10), count(overall, 10)], now: 5, is: { _tag: "Closed", until: Device.GUESS_WINDOW_MS, overall: false } },
    { stored: [count(address, 0), count(overall, 100)], now: 5, is: { _tag: "Closed", until: Device.GUESS_WINDOW_MS, overall: true } },
    // A window that has passed counts from nothing.
    {
      stored: [count(address, 10), count(overall, 100)],
      now: Device.GUESS_WINDOW_MS,
      is: { _tag: "Counted", next: [count(address, 1, Device.GUESS_WINDOW_MS), count(overall, 1, Device.GUESS_WINDOW_MS)] }
    }
  ])("$stored at $now", ({ stored, now, is }) => {
    expect(Guessing.reserve(counters, stored, now)).toEqual(is)
  })

  it("gives a count back only in the window that took it", () => {
    expect(Guessing.refund(count(address, 3), count(address, 2))).toEqual(count(address, 2))
    expect(Guessing.refund(count(address, 3, 99), count(address, 2))).toBeUndefined()
    expect(Guessing.refund(undefined, count(address, 2))).toBeUndefined()
  })

  it("keeps one count per address, and one for all", () => {
    expect(Guessing.countersFor("198.51.100.1")[0]!.id).not.toBe(address)
    expect(overall).toBe(Device.GUESSES_ID)
  })
})
