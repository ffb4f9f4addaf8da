/**
 * How an agent learns to write a panel whose files load: `magi ask --help`
 * and the prompt every run carries say that the HTML names each --asset by
 * its bare file name.
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { askingTheOwner } from "../../src/agents/Prompts.js"
import { tempDirSync } from "../support.js"

const MAGI = NodePath.resolve("dist/magi.js")

describe("how a panel references its files", () => {
  it("is said by `magi ask --help`, next to --panel and --asset", () => {
    const home = tempDirSync()
    const help = spawnSync(process.execPath, [MAGI, "ask", "--help"], {
      env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config"), NO_COLOR: "1" },
      encoding: "utf8"
    })
    const text = help.stdout.replace(/\s+/g, " ")
    expect(text).toContain(`<img src="chart.png">`)
    expect(text).toContain(`<link rel="stylesheet" href="panel.css">`)
    expect(text).toMatch(/--asset.*base name, which is how the panel refers to it/)
  })

  it("is said by the prompt every agent is given", () => {
    const prompt = askingTheOwner().replace(/\s+/g, " ")
    expect(prompt).toContain("--panel report.html --asset chart.png --asset panel.css")
    expect(prompt).toContain(`<img src="chart.png">`)
    expect(prompt).toContain("bare file name")
  })
})
