/**
 * The small rules behind `magi web`'s refusals and choices, checked one case
 * at a time: which Host names pass, which writes a browser could have been
 * tricked into, which address `--bind auto` picks, what a panel file is sent as.
 */
import { describe, expect, it } from "vitest"
import { Option } from "effect"
import { checkHost, checkWrite, hostNameOf } from "../../src/web/Security.js"
import { firstTailnetAddress, inTailnetRange } from "../../src/web/Bind.js"
import { acceptsGzip } from "../../src/web/Responses.js"

describe("Host names", () => {
  it("reads the name out of a Host header with or without a port, and IPv6 literals", () => {
    expect(hostNameOf("LocalHost:7878")).toBe("localhost")
    expect(hostNameOf("100.101.102.103")).toBe("100.101.102.103")
    expect(hostNameOf("[::1]:7878")).toBe("::1")
    expect(hostNameOf("host:")).toBeUndefined()
    expect(hostNameOf("host:80x")).toBeUndefined()
    expect(hostNameOf("[::1")).toBeUndefined()
    expect(hostNameOf("")).toBeUndefined()
  })

  it("lets through only the names the server was bound as", () => {
    const allowed = new Set(["localhost", "127.0.0.1", "laptop.tail1234.ts.net"])
    expect(checkHost("laptop.tail1234.ts.net:7878", allowed)).toEqual(Option.none())
    expect(Option.map(checkHost("attacker.example:7878", allowed), (r) => r.status)).toEqual(Option.some(421))
    expect(Option.isSome(checkHost(undefined, allowed))).toBe(true)
    // The refusal is readable by a rebinding page: it must not list the real names.
    const message = Option.getOrThrow(checkHost("attacker.example", allowed)).message
    expect(message).not.toContain("tail1234")
  })
})

describe("writes from a browser", () => {
  const host = "127.0.0.1:7878"
  const json = { host, "content-type": "application/json" }

  it("lets reads through untouched, whatever their headers", () => {
    expect(checkWrite("GET", { host, origin: "https://evil.example", "sec-fetch-site": "cross-site" })).toEqual(Option.none())
  })

  it("accepts JSON from magi's own origin, and from clients that send no Origin at all", () => {
    expect(checkWrite("POST", { ...json, origin: "http://127.0.0.1:7878", "sec-fetch-site": "same-origin" })).toEqual(Option.none())
    expect(checkWrite("POST", json)).toEqual(Option.none())
    expect(checkWrite("POST", { ...json, "content-type": "Application/JSON; charset=utf-8" })).toEqual(Option.none())
    expect(checkWrite("POST", { ...json, origin: "https://127.0.0.1:7878" })).toEqual(Option.none())
  })

  it("refuses with 403 anything a form or a foreign page could send", () => {
    const refused = (method: string, headers: Record<string, string>) => Option.map(checkWrite(method, headers), (r) => r.status)
    expect(refused("POST", { host, "content-type": "text/plain" })).toEqual(Option.some(403))
    expect(refused("POST", { host })).toEqual(Option.some(403))
    expect(refused("DELETE", { host, "content-type": "application/jsonp" })).toEqual(Option.some(403))
    expect(refused("POST", { ...json, origin: "http://127.0.0.1:7879" })).toEqual(Option.some(403))
    expect(refused("PUT", { ...json, origin: "null" })).toEqual(Option.some(403))
    expect(refused("POST", { ...json, "sec-fetch-site": "cross-site" })).toEqual(Option.some(403))
  })
})

describe("--bind auto", () => {
  it("takes the first address in Tailscale's 100.64.0.0/10 range and nothing outside it", () => {
    expect(inTailnetRange("100.64.0.1")).toBe(true)
    expect(inTailnetRange("100.127.255.254")).toBe(true)
    expect(inTailnetRange("100.128.0.1")).toBe(false)
    expect(inTailnetRange("100.63.255.255")).toBe(false)
    expect(inTailnetRange("10.0.0.1")).toBe(false)
    expect(firstTailnetAddress("192.168.1.4\n100.101.102.103\n100.90.1.1\n")).toEqual(Option.some("100.101.102.103"))
    expect(firstTailnetAddress("fd7a:115c:a1e0::1\n")).toEqual(Option.none())
    expect(firstTailnetAddress("")).toEqual(Option.none())
  })
})

describe("compression", () => {
  it("gzips only for a client that lists gzip without refusing it", () => {
    expect(acceptsGzip("gzip, deflate, br")).toBe(true)
    expect(acceptsGzip("br;q=1.0, gzip;q=0.8")).toBe(true)
    expect(acceptsGzip("*")).toBe(true)
    expect(acceptsGzip("gzip;q=0")).toBe(false)
    expect(acceptsGzip("identity")).toBe(false)
    expect(acceptsGzip(undefined)).toBe(false)
  })
})
