/**
 * The merge approval's panel: the whole case in one page the owner reads on
 * a phone before the one irreversible step. Pure: the driver reads git and
 * hands the text here. Everything in it (the diff, commit subjects, the
 * instruction) is untrusted text, so every byte is escaped; the diff keeps
 * its own `+`/`-`/space gutter, which reads without colour.
 */

export interface PanelCase {
  readonly run: string
  readonly instruction: string
  readonly branch: string
  readonly base: string
  readonly subject: string
  readonly style: string
  /** `git diff --numstat` lines: added, deleted, path, tab-separated (`-` for binary). */
  readonly numstat: string
  readonly diff: string
  /** `git log --format=%h %s` lines, newest first. */
  readonly commits: string
  /** Checks and gate, one line each ("npm test: passed"), when the run recorded them. */
  readonly checks: ReadonlyArray<string>
  /** Findings and how each was addressed, one line each, when the run has a verification. */
  readonly findings: ReadonlyArray<string>
}

/** The most of the diff a panel holds; the rest is named, never silently dropped. */
export const DIFF_MAX_CHARS = 512 * 1024

export const escape = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** The numstat as rows: binary files (`-`) say so instead of a count. */
export const numstatRows = (numstat: string): ReadonlyArray<{ readonly added: string; readonly deleted: string; readonly path: string }> =>
  numstat.split("\n").filter((l) => l.trim() !== "").map((l) => {
    const [added = "", deleted = "", ...path] = l.split("\t")
    return { added: added === "-" ? "binary" : added, deleted: deleted === "-" ? "binary" : deleted, path: path.join("\t") }
  })

const list = (title: string, lines: ReadonlyArray<string>, none: string) =>
  `<h2>${title}</h2>\n` + (lines.length === 0 ? `<p>${escape(none)}</p>\n` : `<ul>\n${lines.map((l) => `<li>${escape(l)}</li>`).join("\n")}\n</ul>\n`)

export const render = (c: PanelCase): string => {
  const rows = numstatRows(c.numstat)
  const table = rows.length === 0
    ? "<p>No file changes.</p>\n"
    : `<table>\n<tr><th>+</th><th>-</th><th>file</th></tr>\n${
      rows.map((r) => `<tr><td>${escape(r.added)}</td><td>${escape(r.deleted)}</td><td>${escape(r.path)}</td></tr>`).join("\n")
    }\n</table>\n`
  const cut = c.diff.length > DIFF_MAX_CHARS
  const diff = cut ? c.diff.slice(0, DIFF_MAX_CHARS) : c.diff
  return [
    '<!doctype html>\n<meta charset="utf-8">\n<title>Merge?</title>\n',
    `<h1>Merge ${escape(c.branch)} into ${escape(c.base)}?</h1>\n`,
    `<p>Answer <b>merge</b> to merge; any other answer, or none, holds.</p>\n`,
    `<h2>The merge</h2>\n<p>${escape(c.style)} with the subject:</p>\n<pre>${escape(c.subject)}</pre>\n`,
    `<h2>The task</h2>\n<pre>${escape(c.instruction)}</pre>\n`,
    list("Checks and gate", c.checks, "No checks or gate were recorded for this run."),
    list("Findings", c.findings, "No review findings were recorded for this run."),
    `<h2>Commits</h2>\n<pre>${escape(c.commits || "(none)")}</pre>\n`,
    `<h2>Files</h2>\n${table}`,
    `<h2>Diff</h2>\n<pre>${escape(diff)}</pre>\n`,
    cut ? `<p>The diff goes on for ${c.diff.length - DIFF_MAX_CHARS} more characters: see the branch ${escape(c.branch)}.</p>\n` : ""
  ].join("")
}
