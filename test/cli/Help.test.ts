/**
 * What a command's help adds by hand (usage forms, examples) names only the
 * options its definition has: the definitions stay the one source.
 */
import { describe, expect, it } from "vitest"
import { Command } from "@effect/cli"
import { describeCommand } from "../../src/cli/CommandSpec.js"
import { undefinedOptions } from "../../src/cli/Help.js"
import { commandHelp, commands } from "../../src/cli/commands.js"

const root = describeCommand(Command.make("magi").pipe(Command.withSubcommands(commands)))

describe("a command's own help", () => {
  it("names only options its command defines, in every usage form and example", () => {
    expect(Object.keys(commandHelp).length).toBeGreaterThan(3)
    for (const [path, extras] of Object.entries(commandHelp)) expect(undefinedOptions(root, extras), path).toEqual([])
  })

  it("reports an option a usage form names that the command lacks, and one a subcommand lacks", () => {
    expect(undefinedOptions(root, { usage: ["magi ask --sumary TEXT [--json]"], examples: [["magi task list --priority 3", "x"]] })).toEqual([
      "magi ask --sumary (in `magi ask --sumary TEXT [--json]`)",
      "magi task list --priority (in `magi task list --priority 3`)"
    ])
    // After `--` the words are an instruction, not options.
    expect(undefinedOptions(root, { examples: [["magi run -- --not-an-option", "x"]] })).toEqual([])
  })
})
