/**
 * How an agent learns to write a panel whose files load: the prompt every
 * run carries says that the HTML names each --asset by its bare file name.
 * (`magi ask --help` says it in its Panels section: test/cli/help.e2e.test.ts.)
 */
import { describe, expect, it } from "vitest"
import { askingTheOwner } from "../../src/agents/Prompts.js"

describe("how a panel references its files", () => {
  it("is said by the prompt every agent is given", () => {
    const prompt = askingTheOwner().replace(/\s+/g, " ")
    expect(prompt).toContain("--panel report.html --asset chart.png --asset panel.css")
    expect(prompt).toContain(`<img src="chart.png">`)
    expect(prompt).toContain("bare file name")
  })
})
