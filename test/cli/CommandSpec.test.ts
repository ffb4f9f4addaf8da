/**
 * The command definitions read as data, and the command line read against
 * them: what magi's help and usage checks rely on in @effect/cli's
 * descriptors (an upgrade that changes their shape fails here first).
 */
import { describe, expect, it } from "vitest"
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { describeCommand } from "../../src/cli/CommandSpec.js"
import { read } from "../../src/cli/CommandLine.js"
import { closest } from "../../src/platform/Spelling.js"
import { ask } from "../../src/cli/ask.js"
import { answer } from "../../src/cli/answer.js"

const pick = Command.make(
  "pick",
  {
    mode: Options.choice("mode", ["fast", "safe"]).pipe(Options.withDescription("how to pick"), Options.withDefault("safe")),
    count: Options.integer("count").pipe(Options.withDescription("how many")),
    verbose: Options.boolean("verbose").pipe(Options.withAlias("v"), Options.withDescription("say more")),
    id: Args.text({ name: "id" }).pipe(Args.withDescription("which one"))
  },
  () => Effect.void
).pipe(Command.withDescription("Pick things"))

const root = describeCommand(Command.make("magi").pipe(Command.withSubcommands([ask, answer, pick])))

describe("the command definitions as data", () => {
  it("reads each option's kind, placeholder, description, default, and whether it is required or repeated", () => {
    const spec = root.subcommands.find((c) => c.name === "pick")!
    expect(spec.path).toEqual(["magi", "pick"])
    expect(spec.description).toBe("Pick things")
    expect(spec.options).toEqual([
      expect.objectContaining({ name: "--mode", kind: "choice", choices: ["fast", "safe"], fallback: "safe", required: false, placeholder: "fast|safe" }),
      expect.objectContaining({ name: "--count", kind: "integer", required: true, description: "how many" }),
      expect.objectContaining({ name: "--verbose", aliases: ["-v"], kind: "flag", required: false })
    ])
    expect(spec.args).toEqual([expect.objectContaining({ name: "<id>", description: "which one", required: true, repeated: false })])
    const askSpec = root.subcommands.find((c) => c.name === "ask")!
    expect(askSpec.options.find((o) => o.name === "--choice")).toMatchObject({ repeated: true, required: false, placeholder: "CHOICE" })
  })
})

describe("the command line read against them", () => {
  const r = (...args: string[]) => read(root, args)
  it("asks for help wherever --help or -h comes before --, and for the root with nothing at all", () => {
    expect(r()).toMatchObject({ _tag: "Help", spec: { name: "magi" } })
    expect(r("ask", "--summary", "x", "-h")).toMatchObject({ _tag: "Help", spec: { name: "ask" } })
    // After --, even --help is a word: here, the id.
    expect(r("pick", "--count", "1", "--", "--help")._tag).toBe("Run")
  })
  it("refuses what the parser would have misread, each in words naming the fix", () => {
    expect(r("pick", "--count", "one", "x")).toEqual({ _tag: "Mistake", message: "--count takes a whole number (N), not `one`" })
    expect(r("pick", "--mode", "slow", "--count", "1", "x")).toEqual({ _tag: "Mistake", message: "--mode takes one of fast, safe, not `slow`" })
    expect(r("pick", "x")).toEqual({ _tag: "Mistake", message: "magi pick needs --count N: how many" })
    expect(r("pick", "--count", "1")).toEqual({ _tag: "Mistake", message: "magi pick needs <id>: which one" })
    expect(r("pick", "--count", "1", "x", "y")._tag).toBe("Mistake")
    expect(r("pick", "--verbose=maybe", "--count", "1", "x")).toEqual({ _tag: "Mistake", message: "--verbose is a switch and takes no value (not `maybe`)" })
    expect(r("pick", "--count", "-3", "-v", "x")._tag).toBe("Run")
    expect(r("ask", "--detail", "-", "--summary=x")._tag).toBe("Run")
    expect(r("--version")._tag).toBe("Run")
  })
  it("suggests the nearest name only when it is a slip, not another word", () => {
    expect(closest("--sumary", ["--summary", "--detail"])).toBe("--summary")
    expect(closest("--sum", ["--summary", "--detail"])).toBe("--summary")
    expect(closest("--colour", ["--summary", "--detail"])).toBeUndefined()
    expect(closest("anwser", ["ask", "answer", "show"])).toBe("answer")
    // One slip from both: the first letter is the one people rarely get wrong.
    expect(closest("tsk", ["ask", "answer", "task"])).toBe("task")
    // Two letters swapped are one slip, not two.
    expect(closest("--prot", ["--bind", "--port", "--home"])).toBe("--port")
  })
})
