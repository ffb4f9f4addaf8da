/**
 * One line of `magi doctor`: what was checked, how it came out, and when it
 * failed, what to do about it. Pure data, so every check's wording is tested
 * without running anything.
 */

/** `warn` is worth knowing and costs nothing today; only `fail` fails the doctor. */
export type Status = "ok" | "warn" | "fail"

export interface Check {
  /** What was checked, e.g. `agent claude: version`. */
  readonly name: string
  readonly status: Status
  /** What was found. */
  readonly detail: string
  /** What to do, when it is not ok. */
  readonly fix?: string
}

export const ok = (name: string, detail: string): Check => ({ name, status: "ok", detail })
export const warn = (name: string, detail: string, fix: string): Check => ({ name, status: "warn", detail, fix })
export const fail = (name: string, detail: string, fix: string): Check => ({ name, status: "fail", detail, fix })

const LABEL: Record<Status, string> = { ok: "ok  ", warn: "warn", fail: "FAIL" }

/** One line per check; the fix follows on the same line. */
export const render = (checks: ReadonlyArray<Check>): string =>
  checks.map((c) => `${LABEL[c.status]}  ${c.name}: ${c.detail}${c.fix === undefined ? "" : ` — ${c.fix}`}\n`).join("")

export const anyFailed = (checks: ReadonlyArray<Check>): boolean => checks.some((c) => c.status === "fail")
