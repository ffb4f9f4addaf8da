/**
 * Agent and vendor names in what a candidate hands the judges (`[blind]
 * on_leak`): a patch that says "claude" or the roster's id of its author
 * tells a judge who wrote it, and the panel is blind by design. Pure: the
 * names found, the text with them blanked, and what `on_leak` makes of a
 * candidate that leaks. The driver does the reading; the branch itself is
 * never rewritten, only what the judges are shown.
 */

/** Vendors and CLIs a model names itself by, beside the roster's own agent ids. */
export const VENDOR_NAMES: ReadonlyArray<string> = ["claude", "anthropic", "codex", "openai", "chatgpt", "gpt", "opencode", "gemini", "copilot"]

/** What replaces a name in the judges' view under `on_leak = "redact"`. */
export const REDACTED = "[redacted]"

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * One pattern for every name, as a whole word (so "gpt" is not found in
 * "cryptography"), case-insensitive. Names under 3 letters are left out: a
 * roster id like "a" would be found in every patch.
 */
const patternOf = (names: ReadonlyArray<string>): RegExp | null => {
  const words = [...new Set(names.map((n) => n.trim().toLowerCase()).filter((n) => n.length >= 3))].sort((a, b) => b.length - a.length)
  return words.length === 0 ? null : new RegExp(`(?<![A-Za-z0-9])(?:${words.map(escape).join("|")})(?![A-Za-z0-9])`, "gi")
}

/** The names (lower case, sorted, each once) that `texts` contain. */
export const findLeaks = (texts: ReadonlyArray<string>, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const pattern = patternOf(names)
  if (pattern === null) return []
  const found = new Set<string>()
  for (const text of texts) for (const m of text.matchAll(pattern)) found.add(m[0].toLowerCase())
  return [...found].sort()
}

/** `text` with every name replaced by `[redacted]`. */
export const redact = (text: string, names: ReadonlyArray<string>): string => {
  const pattern = patternOf(names)
  return pattern === null ? text : text.replace(pattern, REDACTED)
}

export type OnLeak = "warn" | "redact" | "fail"

/**
 * What a candidate with `leaks` becomes: kept as it is (none found, or
 * warn: recorded and shown), kept with the judges' view blanked (redact),
 * or dropped with the reason (fail).
 */
export type LeakDecision =
  | { readonly _tag: "keep" }
  | { readonly _tag: "redact" }
  | { readonly _tag: "drop"; readonly why: string }

export const decide = (mode: OnLeak, leaks: ReadonlyArray<string>): LeakDecision => {
  if (leaks.length === 0 || mode === "warn") return { _tag: "keep" }
  if (mode === "redact") return { _tag: "redact" }
  return {
    _tag: "drop",
    why: `its patch names ${leaks.join(", ")}, and [blind] on_leak = "fail" keeps a candidate that names an agent or vendor away from the judges`
  }
}
