/**
 * A run's (or a candidate's) diff on a 390 px screen: the files with their
 * `+`/`-` counts, then the patch a page at a time (`GET /api/runs/:id/diff`),
 * each line a gutter character (`+`, `-` or a space: it reads without
 * colour) and the line's text. A file past `FOLD_LINES` changed lines starts
 * folded; a binary file is named, never shown.
 *
 * The patch is the agent's text: every line goes in as a text node, never as
 * markup. The box is loaded when first opened and kept across the run page's
 * redraws (`diffBox` hands back the same node for the same branch tip), so
 * a live run does not close a diff being read.
 */
import * as Api from "./api.js"
import type { DiffFile, DiffResponse } from "./api.js"
import { el } from "./dom.js"
import { message } from "./view.js"

/** A file with more changed lines than this starts folded: one huge file must not bury the rest. */
export const FOLD_LINES = 300

const counts = (f: DiffFile) => (f.binary ? "binary" : `+${f.added ?? 0} -${f.deleted ?? 0}`)

const fileList = (files: ReadonlyArray<DiffFile>) => {
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0)
  const deleted = files.reduce((n, f) => n + (f.deleted ?? 0), 0)
  return el(
    "div",
    { class: "diff-files" },
    el("p", { class: "muted" }, `${files.length === 1 ? "1 file" : `${files.length} files`} changed, +${added} -${deleted}`),
    el(
      "ul",
      {},
      ...files.map((f) =>
        el(
          "li",
          { attrs: { "data-path": f.path } },
          el("span", { class: f.binary ? "diff-count binary" : "diff-count" }, counts(f)),
          " ",
          el("span", { class: "diff-path" }, f.from === null ? f.path : `${f.from} → ${f.path}`)
        )
      )
    )
  )
}

/** `diff --git a/x b/x`'s new path: the text after ` b/`, the patch's own naming. */
const pathOfHeader = (line: string) => {
  const at = line.lastIndexOf(" b/")
  return at < 0 ? line.slice("diff --git ".length) : line.slice(at + 3)
}

/** One line of the patch: its gutter character and its text, both text nodes. */
const patchLine = (line: string) => {
  const first = line.charAt(0)
  if (line.startsWith("@@")) return el("div", { class: "dl hunk" }, el("span", { class: "gutter" }, "@"), el("span", { class: "dt" }, line))
  const kind = first === "+" ? "add" : first === "-" ? "del" : first === "\\" ? "meta" : "ctx"
  return el(
    "div",
    { class: `dl ${kind}` },
    el("span", { class: "gutter", attrs: { "aria-label": kind === "add" ? "added" : kind === "del" ? "deleted" : "" } }, first === "\\" ? " " : first || " "),
    el("span", { class: "dt" }, line.slice(1))
  )
}

/**
 * Where the patch's lines go: a section per file, its head lines (index,
 * modes, `---`/`+++`) kept out of the way, a binary file said in words.
 */
const patchWriter = (into: HTMLElement, files: ReadonlyArray<DiffFile>) => {
  const byPath = new Map(files.map((f) => [f.path, f]))
  let body: HTMLElement | undefined
  let inHead = false
  return (lines: ReadonlyArray<string>) => {
    const out = document.createDocumentFragment()
    for (const line of lines) {
      if (line.startsWith("diff --git ")) {
        const path = pathOfHeader(line)
        const f = byPath.get(path)
        const changed = (f?.added ?? 0) + (f?.deleted ?? 0)
        const folded = changed > FOLD_LINES
        body = el("div", { class: "diff-body" })
        const file = el(
          "details",
          { class: "diff-file", attrs: { "data-path": path, open: !folded } },
          el(
            "summary",
            {},
            el("span", { class: "diff-path" }, path),
            " ",
            el("span", { class: "diff-count" }, f === undefined ? "" : counts(f)),
            folded ? el("span", { class: "muted" }, ` · ${changed} lines, folded`) : null
          ),
          body
        )
        out.append(file)
        inHead = true
        continue
      }
      if (body === undefined) {
        body = el("div", { class: "diff-body" })
        out.append(body)
      }
      if (inHead && !line.startsWith("@@")) {
        if (line.startsWith("Binary files ")) body.append(el("p", { class: "muted diff-binary" }, "Binary file: not shown."))
        else if (line.startsWith("new file") || line.startsWith("deleted file") || line.startsWith("rename "))
          body.append(el("p", { class: "muted diff-meta" }, line))
        continue
      }
      inHead = false
      body.append(patchLine(line))
    }
    into.append(out)
  }
}

/** The open diff boxes, by run, candidate and branch tip: a redraw reuses the one being read. */
const boxes = new Map<string, HTMLElement>()

/**
 * The diff, folded until opened; `tip` says which state of the branch it
 * is (its commits count, say), so new commits give a fresh box.
 */
export const diffBox = (run: string, candidate: string | null, tip: string, title = "Diff") => {
  const key = JSON.stringify([run, candidate, tip])
  const kept = boxes.get(key)
  if (kept !== undefined) return kept
  const status = el("p", { class: "muted diff-status", attrs: { role: "status" } })
  const patch = el("div", { class: "diff-patch" })
  const more = el("button", { class: "diff-more", attrs: { type: "button", hidden: true } }, "Show more of the diff")
  const holder = el("div", { class: "diff-content" }, status, patch, more)
  const box = el("details", { class: "diff", attrs: { "data-candidate": candidate ?? "" } }, el("summary", {}, title), holder)
  let write: ((lines: ReadonlyArray<string>) => void) | undefined
  let next: number | null = 0
  let loading = false
  const load = () => {
    if (loading || next === null) return
    loading = true
    more.disabled = true
    status.textContent = next === 0 ? "Loading the diff…" : "Loading more…"
    Api.getDiff(run, candidate, next).then(
      (page: DiffResponse) => {
        loading = false
        more.disabled = false
        if (page.files !== null) {
          holder.insertBefore(fileList(page.files), patch)
          write = patchWriter(patch, page.files)
          if (page.files.length === 0) status.textContent = `No changes off ${page.base} yet.`
        }
        write?.(page.lines)
        next = page.next
        more.hidden = next === null
        if (page.files === null || page.files.length > 0) status.textContent = ""
        status.hidden = status.textContent === ""
      },
      (e: unknown) => {
        loading = false
        more.disabled = false
        status.hidden = false
        status.className = "notice error diff-status"
        status.textContent = `Could not load the diff: ${message(e)}`
      }
    )
  }
  box.addEventListener("toggle", () => {
    if (box.open && write === undefined) load()
  })
  more.addEventListener("click", load)
  // Forget the boxes of other tips of the same run and candidate.
  for (const k of boxes.keys()) {
    const [r, c] = JSON.parse(k) as [string, string | null]
    if (r === run && c === candidate) boxes.delete(k)
  }
  boxes.set(key, box)
  // A page open all day visits many runs: keep the newest few boxes only.
  if (boxes.size > 20) boxes.delete(boxes.keys().next().value!)
  return box
}
