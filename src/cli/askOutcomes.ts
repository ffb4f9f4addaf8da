/**
 * What `magi ask` prints for each way it can end, and its exit code: the
 * table an agent acts on. One definition for `magi ask --help` and the
 * table in docs/protocol.md (a test holds the page to it).
 */

export interface AskOutcome {
  readonly outcome: string
  readonly stdout: string
  readonly exit: string
}

export const ASK_OUTCOMES: ReadonlyArray<AskOutcome> = [
  {
    outcome: "answered",
    stdout: "the answer text alone (words the owner said that the agent never saw come first, under a short header)",
    exit: "0"
  },
  {
    outcome: "replied (the owner asked back)",
    stdout: "the owner's words, then the exact `magi ask --thread <id> --summary \"...\"` to answer them, with the question's current `--choice`s",
    exit: "0"
  },
  {
    outcome: "pending (this slice ran out)",
    stdout:
      "a note, then the exact `magi ask --wait <id>` to keep waiting; for a run's seat that ends its turn on it (`MAGI_WAIT=end-turn`), a note to end the turn instead (the waiter resumes the seat with the answer)",
    exit: "0"
  },
  { outcome: "abandoned (the deadline passed, or the owner withdrew it)", stdout: "nothing; stderr says why (a withdrawal, in the owner's words)", exit: "1" },
  {
    outcome: "the deadline passed while the store could not be reached (PostgreSQL away)",
    stdout: "as pending: the exact `magi ask --wait <id>`; stderr says the deadline is applied once the store answers, which the next `--wait` does",
    exit: "0"
  },
  {
    outcome: "stopped by a signal while waiting",
    stdout: "nothing; stderr says the question stays open, and the exact `magi ask --wait <id>`",
    exit: "130 (SIGINT), 143 (SIGTERM)"
  },
  { outcome: "refused (bad input, a settled question)", stdout: "nothing; stderr says why", exit: "1" },
  { outcome: "usage mistake", stdout: "nothing; stderr says what was wrong", exit: "2" }
]

/** The table as docs/protocol.md has it. */
export const outcomesMarkdown = (): string =>
  ["| outcome | stdout | exit |", "|---|---|---|", ...ASK_OUTCOMES.map((o) => `| ${o.outcome} | ${o.stdout} | ${o.exit} |`)].join("\n")

/** The table for a terminal: each outcome, its exit code, and what stdout carries under it. */
export const outcomesText = (): ReadonlyArray<string> =>
  ASK_OUTCOMES.flatMap((o) => [`${o.outcome}: exit ${o.exit}`, `    stdout: ${o.stdout.replaceAll("`", "")}`])
