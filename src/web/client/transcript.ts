/**
 * Each finished turn of a run, readable: the run page lists every turn's
 * `.out` artifact and, when one is opened, reads it as a transcript
 * (`agents/Transcript.ts`: messages, tool calls with a one-line result,
 * errors). Every string goes in as a text node; a tool result holding
 * HTML or a `javascript:` link is those characters, never a link.
 */
import { type Entry, transcriptOf } from "../../agents/Transcript.js"
import * as Api from "./api.js"
import type { RunDetail } from "./api.js"
import { el } from "./dom.js"
import { message } from "./view.js"

const entryNode = (e: Entry) =>
  e.kind === "message"
    ? el("div", { class: "tx message detail text" }, e.text)
    : e.kind === "error"
    ? el("p", { class: "tx notice error" }, e.text)
    : el(
      "div",
      { class: `tx tool${e.failed ? " failed" : ""}` },
      el("span", { class: "tool-name" }, `${e.failed ? "✗" : "▸"} ${e.name}`),
      e.target === "" ? null : el("code", { class: "tool-target" }, ` ${e.target}`),
      e.result === "" ? null : el("span", { class: "tool-result muted" }, ` → ${e.result}`)
    )

/** `impl-A-2.out` → `impl-A · turn 2`. */
const turnName = (file: string) => {
  const m = /^(.*)-(\d+)\.out$/.exec(file)
  return m === null ? file : `${m[1]} · turn ${m[2]}`
}

const turnBox = (run: string, name: string) => {
  const body = el("div", { class: "transcript-body" })
  const box = el("details", { class: "transcript", attrs: { "data-artifact": name } }, el("summary", {}, turnName(name)), body)
  let loaded = false
  box.addEventListener("toggle", () => {
    if (!box.open || loaded) return
    loaded = true
    body.replaceChildren(el("p", { class: "muted" }, "Loading the turn…"))
    fetch(Api.artifactUrl(run, name), { cache: "no-store" })
      .then(async (r) => {
        if (!r.ok) throw new Error(`${r.status} ${r.statusText}`)
        return r.text()
      })
      .then(
        (text) => {
          const entries = transcriptOf(text)
          body.replaceChildren(...(entries.length === 0 ? [el("p", { class: "muted" }, "Nothing to show of this turn.")] : entries.map(entryNode)))
        },
        (e: unknown) => {
          loaded = false
          body.replaceChildren(el("p", { class: "notice error" }, `Could not read the turn: ${message(e)}`))
        }
      )
  })
  return box
}

/** Kept across redraws, so a turn being read stays open while the run follows the store. */
const boxes = new Map<string, HTMLElement>()

/** The run page's section of finished turns, newest first; nothing before the first turn ends. */
export const turnsSection = (r: RunDetail): ReadonlyArray<Node | null> | null => {
  const outs = r.artifacts.filter((a) => a.name.endsWith(".out")).reverse()
  if (outs.length === 0) return null
  return [
    el("h4", {}, "Turns"),
    el(
      "div",
      { class: "turns" },
      ...outs.map((a) => {
        const key = `${r.id}/${a.name}/${a.size}`
        const kept = boxes.get(key) ?? turnBox(r.id, a.name)
        boxes.set(key, kept)
        if (boxes.size > 200) boxes.delete(boxes.keys().next().value!)
        return kept
      })
    )
  ]
}
