import { describe, expect, it } from "vitest"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { terminalBriefing } from "../../src/chat/Chat.js"
import { interactiveArgv } from "../../src/chat/Plan.js"

const spec = (kind: AgentSpec["kind"], over: Partial<AgentSpec> = {}): AgentSpec => ({
  id: kind,
  kind,
  command: [kind],
  model: null,
  args: [],
  env: {},
  ...over
})

describe("the interactive call magi plan makes", () => {
  it("opens each CLI's own UI with the briefing as its first message", () => {
    expect(interactiveArgv(spec("claude", { model: "opus", args: ["--verbose"] }), "P", "/p.md", "/r")).toEqual([
      "claude",
      "--model",
      "opus",
      "--verbose",
      "P"
    ])
    expect(interactiveArgv(spec("codex", { model: "gpt-5" }), "P", "/p.md", "/r")).toEqual(["codex", "-m", "gpt-5", "P"])
    expect(interactiveArgv(spec("opencode"), "P", "/p.md", "/r")).toEqual(["opencode", "--prompt", "P"])
  })

  it("never runs headless: no print mode, no JSON output, no bypassed permissions", () => {
    for (const kind of ["claude", "codex", "opencode"] as const) {
      const argv = interactiveArgv(spec(kind), "P", "/p.md", "/r")
      expect(argv).not.toContain("-p")
      expect(argv).not.toContain("exec")
      expect(argv.join(" ")).not.toMatch(/json|bypassPermissions/)
    }
  })

  it("fills a command agent's template with the briefing's file and the repository", () => {
    expect(interactiveArgv(spec("command", { command: ["my-agent", "{prompt_file}", "--in={cwd}", "{label}"] }), "P", "/p.md", "/r")).toEqual([
      "my-agent",
      "/p.md",
      "--in=/r",
      "plan"
    ])
  })
})

describe("the terminal briefing", () => {
  it("asks for the task file at magi's path, with the same rules and spec as the chat", () => {
    const b = terminalBriefing("retry the fetcher", "/src/app", "/home/plans/x/task.md")
    expect(b).toContain("write the whole task file to /home/plans/x/task.md")
    expect(b).toContain("never modify")
    expect(b).toContain("one question per message")
    expect(b).toContain("## Completion criteria")
    expect(b).toContain("retry the fetcher")
    expect(b).not.toContain("```task fenced block")
  })
})
