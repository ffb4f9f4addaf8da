import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as Device from "../../src/devices/Device.js"
import * as QrText from "../../src/platform/QrText.js"
import { isLoopback, reachableBeyondLoopback } from "../../src/web/Bind.js"
import { openWithoutPairing } from "../../src/web/Security.js"

describe("pairing codes", () => {
  it("are 8 characters of Crockford base32, read back whatever the case, spaces or look-alike letters", () => {
    const code = Device.newCode()
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/)
    expect(Device.normalizeCode(` ${code.toLowerCase()} `)).toBe(code.replace("-", ""))
    expect(Device.normalizeCode("oil0-1234")).toBe("01101234")
    expect(Device.normalizeCode("ABCD-EFG")).toBeUndefined()
    expect(Device.normalizeCode("ABCD-EFGU")).toBeUndefined()
    expect(Device.codeId("abcd efgh")).toBe(Device.codeId("ABCD-EFGH"))
  })

  it("are refused once used or once expired", () => {
    const code: Device.PairingCode = { schema: 1, id: "x", expires_at: 1_000, used_at: null, used_by: null }
    expect(Device.codeRefusal(code, 999)).toBeUndefined()
    expect(Device.codeRefusal(code, 1_000)).toContain("expired")
    expect(Device.codeRefusal({ ...code, used_at: 500, used_by: "d" }, 600)).toContain("used already")
  })
})

describe("guessing", () => {
  it("closes after MAX_FAILED_GUESSES wrong codes, until the window that counted them has passed", () => {
    let g: Device.Guesses | undefined
    for (let i = 0; i < Device.MAX_FAILED_GUESSES - 1; i++) g = Device.withFailure(g, 1_000 + i)
    expect(Device.guessingClosedUntil(g!, 2_000)).toBeUndefined()
    g = Device.withFailure(g, 2_000)
    expect(Device.guessingClosedUntil(g, 2_001)).toBe(1_000 + Device.GUESS_WINDOW_MS)
    expect(Device.guessingClosedUntil(g, 1_000 + Device.GUESS_WINDOW_MS)).toBeUndefined()
  })
})

describe("device cookies", () => {
  it("match only the secret whose hash is stored, and only in their own shape", () => {
    const { id, secret } = Device.newSecret()
    const device: Device.Device = { schema: 1, id, name: "phone", secret_sha256: Device.secretHash(secret), paired_at: 0, last_used_at: 0 }
    const parsed = Device.parseCookieValue(Device.cookieFrom(`a=b; magi_device=${Device.cookieValue(id, secret)}`)!)
    expect(parsed).toEqual({ id, secret })
    expect(Device.secretMatches(device, secret)).toBe(true)
    expect(Device.secretMatches(device, Device.newSecret().secret)).toBe(false)
    expect(Device.parseCookieValue(`${id}.short`)).toBeUndefined()
    expect(Device.parseCookieValue(`../x.${secret}`)).toBeUndefined()
    expect(Device.setCookie("v", true)).toBe(`magi_device=v; Path=/; Max-Age=${Device.COOKIE_MAX_AGE_SECS}; HttpOnly; SameSite=Strict; Secure`)
  })

  it("names: control characters dropped, empty and overlong refused", () => {
    expect(Device.checkName(" my\u0007 phone\u200b ")).toEqual(Either.right("my phone"))
    expect(Either.isLeft(Device.checkName(" \u0000 "))).toBe(true)
    expect(Either.isLeft(Device.checkName("x".repeat(Device.NAME_MAX_CHARS + 1)))).toBe(true)
  })
})

describe("when a device must pair", () => {
  it("is when the page is bound beyond loopback, or its public address is not loopback", () => {
    expect(reachableBeyondLoopback("127.0.0.1", null)).toBe(false)
    expect(reachableBeyondLoopback("::1", "http://localhost:7878")).toBe(false)
    expect(reachableBeyondLoopback("127.0.0.1", "https://box.tail1234.ts.net")).toBe(true)
    expect(reachableBeyondLoopback("100.101.102.103", null)).toBe(true)
    expect(reachableBeyondLoopback("0.0.0.0", null)).toBe(true)
    expect(isLoopback("127.8.9.10")).toBe(true)
    expect(isLoopback("::ffff:127.0.0.1")).toBe(true)
    expect(isLoopback("128.0.0.1")).toBe(false)
  })

  it("leaves open only the pairing page and the capability links' routes", () => {
    for (const open of ["/pair", "/pair.js", "/api/pair", "/api/answer-by-token", "/api/answer-by-token/x", "/t/abc"])
      expect(openWithoutPairing(open)).toBe(true)
    for (const closed of ["/", "/app.js", "/api/questions", "/api/devices", "/api/pairx", "/tx", "/t", "/api/answer-by-tokens"])
      expect(openWithoutPairing(closed)).toBe(false)
  })
})

describe("a QR code in terminal text", () => {
  it("draws exactly the code's modules, inside a quiet zone of 4", () => {
    const link = "https://box.tail1234.ts.net/pair#code=ABCD-EFGH"
    const drawn = QrText.readBack(QrText.render(link))
    const inner = QrText.modules(link)
    const size = inner.length + 2 * QrText.QUIET_ZONE
    expect(drawn[0]!.length).toBe(size)
    for (let r = 0; r < size; r++)
      for (let c = 0; c < size; c++)
        expect(drawn[r]![c], `module ${r},${c}`).toBe(inner[r - QrText.QUIET_ZONE]?.[c - QrText.QUIET_ZONE] === true)
  })
})
