// Questions as magi stores them, for the benches and the tests that build
// a home or a database of many: pure, no side effects on import.

const pad2 = (n) => String(n).padStart(2, "0")
/** `YYYYMMDD-HHMMSS-xxxx` in local time, as `Question.makeId` draws them; `n` gives the suffix. */
export const questionIdAt = (d, n) =>
  `${d.getFullYear()}${pad2(d.getMonth() + 1)}${pad2(d.getDate())}-${pad2(d.getHours())}${pad2(d.getMinutes())}${pad2(d.getSeconds())}-${
    (n & 0xffff).toString(16).padStart(4, "0")
  }`
/** A timestamp as magi writes one (whole seconds, UTC). */
export const stampOf = (d) => d.toISOString().replace(/\.\d+Z$/, "Z")

/**
 * Question `n`, asked at `at`, as magi stores one (schema 4): open, or
 * answered a minute later; with a panel (`chart.svg` its asset) when asked.
 * `summary` overrides the generated one (a word a search should find).
 */
export const questionRecord = (at, n, { open = false, panel = false, summary } = {}) => ({
  schema: 4,
  id: questionIdAt(at, n),
  run: `20260101-000000-${(n % 500).toString(16).padStart(4, "0")}`,
  node: "implement",
  seat: "impl-A",
  summary: summary ?? `Which storage backend should cache ${n} use?`,
  detail: "Both are already dependencies. The benchmark numbers are in the panel. ".repeat(3),
  choices: ["SQLite", "Redis"],
  panel,
  assets: panel ? ["chart.svg"] : [],
  status: open ? "open" : "answered",
  asked_at: stampOf(at),
  answered_at: open ? null : stampOf(new Date(at.getTime() + 60_000)),
  answer: open ? null : { choice: n % 2 ? "SQLite" : "Redis" },
  thread: [],
  answer_timeout: 0,
  cwd: "",
  delivered_turns: 0,
  answer_delivered: !open,
  waiter: null
})
