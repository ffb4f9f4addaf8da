/**
 * The command definitions read as data from @effect/cli's own usage and
 * help, and a command line read once by @effect/cli with magi's words for
 * what it refuses: what magi's help and usage messages rely on (an upgrade
 * that changes what the library says fails here first).
 */
import { describe, expect, it } from "vitest"
import { Args, CliConfig, Command, Options, ValidationError } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { cliConfig, describeCommand } from "../../src/cli/CommandSpec.js"
import { explain, read } from "../../src/cli/CommandLine.js"
import { closest } from "../../src/platform/Spelling.js"
import { ask } from "../../src/cli/ask.js"
import { answer } from "../../src/cli/answer.js"

let ran: unknown = undefined

const pick = Command.make(
  "pick",
  {
    mode: Options.choice("mode", ["fast", "safe"]).pipe(Options.withDescription("how to pick"), Options.withDefault("safe")),
    count: Options.integer("count").pipe(Options.withDescription("how many")),
    verbose: Options.boolean("verbose").pipe(Options.withAlias("v"), Options.withDescription("say more")),
    id: Args.text({ name: "id" }).pipe(Args.withDescription("which one"))
  },
  (picked) => Effect.sync(() => void (ran = picked))
).pipe(Command.withDescription("Pick things"))

const group = Command.make("group").pipe(
  Command.withDescription("Things in a group"),
  Command.withSubcommands([Command.make("inner", { level: Args.choice([["low", 0], ["high", 1]], { name: "level" }) }, () => Effect.void)])
)

const command = Command.make("magi").pipe(Command.withSubcommands([ask, answer, pick, group]))
const root = describeCommand(command)
const cli = Command.run(command, { name: "magi", version: "0" })

/** What magi makes of `args`: help, a mistake in its words, or the command run. */
const outcome = (...args: string[]): Promise<{ _tag: string; message?: string }> => {
  ran = undefined
  const reading = read(root, args)
  if (reading._tag !== "Run") return Promise.resolve(reading._tag === "Mistake" ? reading : { _tag: "Help" })
  const quiet = Effect.map(Console.consoleWith(Effect.succeed), (c): Console.Console => ({ ...c, error: () => Effect.void }))
  return Effect.runPromise(
    Effect.flatMap(quiet, (c) => Effect.withConsole(cli(["node", "magi", ...args]), c)).pipe(
      Effect.as({ _tag: "Run" }),
      Effect.catchIf(ValidationError.isValidationError, (e) => Effect.succeed({ _tag: "Mistake", message: explain(reading.spec, args, e) })),
      Effect.provide(Layer.merge(NodeContext.layer, CliConfig.layer(cliConfig)))
    )
  )
}

describe("the command definitions as data", () => {
  it("reads each option's placeholder, description, default, and whether it is a switch, required or repeated", () => {
    const spec = root.subcommands.find((c) => c.name === "pick")!
    expect(spec.path).toEqual(["magi", "pick"])
    expect(spec.description).toBe("Pick things")
    expect(spec.options).toEqual([
      expect.objectContaining({
        name: "--mode",
        kind: "choice",
        choices: ["fast", "safe"],
        required: false,
        placeholder: "fast|safe",
        description: "how to pick"
      }),
      expect.objectContaining({ name: "--count", kind: "integer", required: true, description: "how many" }),
      expect.objectContaining({ name: "--verbose", aliases: ["-v"], kind: "flag", required: false })
    ])
    expect(spec.args).toEqual([expect.objectContaining({ name: "<id>", description: "which one", required: true, repeated: false })])
    const askSpec = root.subcommands.find((c) => c.name === "ask")!
    expect(askSpec.options.find((o) => o.name === "--choice")).toMatchObject({ repeated: true, required: false, placeholder: "CHOICE" })
  })

  it("follows subcommands down, in the order they were given", () => {
    expect(root.subcommands.map((c) => c.name)).toEqual(["ask", "answer", "pick", "group"])
    const inner = root.subcommands.find((c) => c.name === "group")!.subcommands
    expect(inner.map((c) => c.path.join(" "))).toEqual(["magi group inner"])
    expect(inner[0]!.args[0]).toMatchObject({ name: "<level>", choices: ["low", "high"] })
  })
})

describe("the command line, read once", () => {
  it("asks for help wherever --help or -h comes before --, and for the root or a group with nothing more", async () => {
    expect(read(root, [])).toMatchObject({ _tag: "Help", spec: { name: "magi" } })
    expect(read(root, ["group"])).toMatchObject({ _tag: "Help", spec: { name: "group" } })
    expect(read(root, ["ask", "--summary", "x", "-h"])).toMatchObject({ _tag: "Help", spec: { name: "ask" } })
    // After --, even --help is a word: here, the id.
    expect(await outcome("pick", "--count", "1", "--", "--help")).toEqual({ _tag: "Run" })
    expect(ran).toMatchObject({ id: "--help", count: 1, mode: "safe" })
  })

  it("runs what @effect/cli reads, with negative numbers, aliases and `-` for stdin", async () => {
    expect(await outcome("pick", "--count", "-3", "-v", "x")).toEqual({ _tag: "Run" })
    expect(ran).toMatchObject({ count: -3, verbose: true, id: "x" })
  })

  it("says what @effect/cli refused in words naming the flag or argument and what it takes", async () => {
    expect(await outcome("pick", "--count", "one", "x")).toEqual({ _tag: "Mistake", message: "--count takes a whole number (N), not `one`" })
    expect(await outcome("pick", "--count=one", "x")).toEqual({ _tag: "Mistake", message: "--count takes a whole number (N), not `one`" })
    expect(await outcome("pick", "--mode", "slow", "--count", "1", "x")).toEqual({ _tag: "Mistake", message: "--mode takes one of fast, safe, not `slow`" })
    expect(await outcome("pick", "x")).toEqual({ _tag: "Mistake", message: "magi pick needs --count N: how many" })
    expect(await outcome("pick", "--count", "1")).toEqual({ _tag: "Mistake", message: "magi pick needs <id>: which one" })
    expect(await outcome("pick", "--count", "1", "x", "y")).toEqual({
      _tag: "Mistake",
      message: "magi pick takes at most 1 argument (<id>); `y` is one too many"
    })
    expect(await outcome("group", "inner", "middle")).toEqual({ _tag: "Mistake", message: "magi group inner: the level is one of low, high, not `middle`" })
    expect(ran).toBeUndefined()
  })

  it("refuses before parsing what @effect/cli would take for an argument", async () => {
    expect(await outcome("pick", "--verbose=maybe", "--count", "1", "x")).toEqual({
      _tag: "Mistake",
      message: "--verbose is a switch and takes no value (not `maybe`)"
    })
    expect(await outcome("answer", "--rply", "yes")).toEqual({ _tag: "Mistake", message: "magi answer has no option --rply; did you mean --reply?" })
    expect((await outcome("answer", "--reply")).message).toMatch(/^--reply needs a value \(TEXT\)/)
    expect(await outcome("pick", "--count", "1", "--count", "2", "x")).toEqual({
      _tag: "Mistake",
      message: "--count was given more than once; it takes one value"
    })
    // `-` is a value (stdin), and `--summary=x` an option with its value.
    expect(read(root, ["ask", "--detail", "-", "--summary=x"])._tag).toBe("Run")
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
