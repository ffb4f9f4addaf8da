/** Framing.ts's rules as tables: how bytes become lines, and what each line gets. */
import { describe, expect, it } from "vitest"
import { type Framed, INVALID_PARAMS, INVALID_REQUEST, judge, LineFramer, METHOD_NOT_FOUND, PARSE_ERROR } from "../../src/mcp/Framing.js"

const bytes = (s: string) => new TextEncoder().encode(s)
const line = (s: string): Framed => ({ _tag: "Line", bytes: bytes(s) })
const text = (f: Framed) => (f._tag === "Line" ? new TextDecoder().decode(f.bytes) : `<${f.bytes} dropped>`)

describe("LineFramer", () => {
  it.each([
    { chunks: ["a\nb\n"], lines: ["a", "b"], left: [] },
    { chunks: ["a", "b\nc"], lines: ["ab"], left: ["c"] },
    { chunks: ["\n\n"], lines: ["", ""], left: [] },
    // max is 4 bytes: a longer line is counted and dropped, and the next is whole again
    { chunks: ["12", "345", "6\nok\n"], lines: ["<6 dropped>", "ok"], left: [] },
    { chunks: ["1234\n12345"], lines: ["1234"], left: ["<5 dropped>"] }
  ])("$chunks → $lines then $left", ({ chunks, lines, left }) => {
    const framer = new LineFramer(4)
    expect(chunks.flatMap((c) => framer.push(bytes(c))).map(text)).toEqual(lines)
    expect(framer.end().map(text)).toEqual(left)
  })

  it("never holds more than the limit of a line however much of it arrives", () => {
    const framer = new LineFramer(1024)
    const chunk = new Uint8Array(64 * 1024).fill(97)
    for (let i = 0; i < 100; i++) expect(framer.push(chunk)).toEqual([])
    expect(framer.push(bytes("\n"))).toEqual([{ _tag: "TooLong", bytes: 100 * 64 * 1024 }])
  })
})

describe("judge", () => {
  it.each([
    { line: "{not json", verdict: { _tag: "Refuse", id: null, code: PARSE_ERROR } },
    { line: "42", verdict: { _tag: "Refuse", id: null, code: INVALID_REQUEST } },
    { line: "null", verdict: { _tag: "Refuse", id: null, code: INVALID_REQUEST } },
    { line: '{"jsonrpc":"2.0"}', verdict: { _tag: "Refuse", id: null, code: INVALID_REQUEST } },
    { line: '{"jsonrpc":"1.0","id":3,"method":"ping"}', verdict: { _tag: "Refuse", id: 3, code: INVALID_REQUEST } },
    { line: '{"jsonrpc":"2.0","id":true,"method":"ping"}', verdict: { _tag: "Refuse", id: null, code: INVALID_REQUEST } },
    { line: '{"jsonrpc":"2.0","id":2,"method":"no/such/method"}', verdict: { _tag: "Refuse", id: 2, code: METHOD_NOT_FOUND } },
    { line: '{"jsonrpc":"2.0","id":"x","method":"tools/call"}', verdict: { _tag: "Refuse", id: "x", code: INVALID_PARAMS } },
    { line: '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[]}', verdict: { _tag: "Refuse", id: 4, code: INVALID_PARAMS } },
    { line: '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{}}}', verdict: { _tag: "Forward", id: 5 } },
    { line: '{"jsonrpc":"2.0","id":6,"method":"tools/list"}', verdict: { _tag: "Forward", id: 6 } },
    { line: '{"jsonrpc":"2.0","method":"notifications/initialized"}', verdict: { _tag: "Forward" } },
    { line: '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}', verdict: { _tag: "Forward", cancels: 5 } },
    // JSON-RPC never answers a notification, even an unknown one
    { line: '{"jsonrpc":"2.0","method":"no/such/notice"}', verdict: { _tag: "Skip" } },
    // the client's answer to a request of the server's
    { line: '{"jsonrpc":"2.0","id":9,"result":{}}', verdict: { _tag: "Forward" } },
    { line: "  \r", verdict: { _tag: "Skip" } }
  ])("$line", ({ line: l, verdict }) => {
    expect(judge(line(l))).toMatchObject(verdict)
  })

  it("refuses control bytes, bytes that are not UTF-8 and an overlong line as parse errors", () => {
    expect(judge(line("\u0001\u0002"))).toMatchObject({ code: PARSE_ERROR, id: null })
    expect(judge({ _tag: "Line", bytes: new Uint8Array([0x7b, 0xff, 0x7d]) })).toMatchObject({ code: PARSE_ERROR, id: null })
    expect(judge({ _tag: "TooLong", bytes: 17 * 1024 * 1024 })).toMatchObject({ code: PARSE_ERROR, id: null })
  })
})
