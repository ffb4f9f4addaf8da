import { describe, expect, it } from "vitest"
import { forTerminal, forTerminalLine } from "../../src/platform/TerminalText.js"

describe("agent text made safe for a terminal", () => {
  it("shows escape sequences, carriage returns and bells visibly instead of letting the terminal obey them", () => {
    expect(forTerminalLine("Deploy?\r\x1b[2KRun tests?\x1b]52;c;eA==\x07")).toBe("Deploy?\\r\\e[2KRun tests?\\e]52;c;eA==\\x07")
  })

  it("keeps the lines of multi-line text, and escapes them in one-line text", () => {
    expect(forTerminal("one\ntwo\tthree")).toBe("one\ntwo\tthree")
    expect(forTerminalLine("one\ntwo\tthree")).toBe("one\\ntwo\\tthree")
  })

  it("escapes DEL, the C1 controls a terminal may read as CSI, and the bidirectional overrides", () => {
    expect(forTerminal("a\x7fb\u009b31mc\u202edcba\u2066x\u2069")).toBe("a\\x7fb\\x9b31mc\\u202edcba\\u2066x\\u2069")
  })

  it("leaves ordinary text, accents and emoji as they are", () => {
    const text = "Déployer en préprod ? 🚀 C:\\Users\\me"
    expect(forTerminalLine(text)).toBe(text)
  })
})
