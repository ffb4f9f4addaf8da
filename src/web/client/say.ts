/**
 * The run page's box for a word to a seat (`magi say`): a seat to choose
 * when the run has several, the words, Send; below it the words said so
 * far, a queued one with Edit and Cancel until its seat's turn takes it.
 * The words are the owner's own, shown back as plain text.
 */
import * as Api from "./api.js"
import type { RunDetail } from "./api.js"
import { el } from "./dom.js"
import { message } from "./view.js"

type SaidWord = NonNullable<RunDetail["said"]>[number]

/** What is being typed, by run: the page redraws when the run changes, and a draft must outlive it. */
const drafts = new Map<string, string>()
/**
 * The image picked for each run's box, kept outside the DOM: the run view redraws as the
 * run changes, and a fresh file input holds no file, so a redraw between picking and Send
 * would otherwise send the words without the image.
 */
const picked = new Map<string, File>()
/** A queued word being edited (`run#n` → the words in its box), kept across redraws like a draft. */
const edits = new Map<string, string>()
/** What the last Send said, by run: shown again by the redraw its own change causes. */
const lastSaid = new Map<string, { readonly text: string; readonly error: boolean }>()

const OVER = new Set(["superseded", "merged", "closed", "already_in_base", "ready"])

const stateWords = (w: SaidWord): string =>
  w.state === "queued"
    ? "queued: given to the seat when its turn ends"
    : w.state === "delivered"
    ? `delivered in turn ${w.turn ?? "?"}`
    : w.state === "refused"
    ? `not delivered: ${w.why ?? ""}`
    : "cancelled"

const wordItem = (r: RunDetail, w: SaidWord, reload: () => void) => {
  const status = el("p", { class: "say-status muted", attrs: { role: "status", hidden: true } })
  const fail = (what: string) => (e: unknown) => {
    status.hidden = false
    status.className = "say-status notice error"
    status.textContent = `${what}: ${message(e)}`
  }
  const actions = w.state !== "queued" ? null : (() => {
    const edit = el("button", { class: "say-edit", attrs: { type: "button" } }, "Edit")
    const cancel = el("button", { class: "say-cancel danger", attrs: { type: "button" } }, "Cancel")
    const key = `${r.id}#${w.n}`
    // The edit box is drawn from `edits`, so a redraw while the owner types keeps the box and its words.
    const editing = () => {
      const box = el("textarea", { class: "say-edit-text", attrs: { rows: "3", "aria-label": `New words for word ${w.n}` } })
      box.value = edits.get(key) ?? w.text
      box.addEventListener("input", () => edits.set(key, box.value))
      const save = el("button", { class: "say-save", attrs: { type: "button" } }, "Save")
      save.addEventListener("click", () => {
        save.disabled = true
        Api.editSaid(r.id, w.n, box.value).then(() => {
          edits.delete(key)
          reload()
        }, (e: unknown) => {
          save.disabled = false
          fail("Not changed")(e)
        })
      })
      return { node: el("div", { class: "say-editing" }, box, save), box }
    }
    if (edits.has(key)) return el("div", { class: "say-actions" }, editing().node, cancel)
    edit.addEventListener("click", () => {
      edits.set(key, w.text)
      const { box, node } = editing()
      edit.replaceWith(node)
      box.focus()
    })
    cancel.addEventListener("click", () => {
      cancel.disabled = true
      Api.cancelSaid(r.id, w.n).then(reload, (e: unknown) => {
        cancel.disabled = false
        fail("Not cancelled")(e)
      })
    })
    return el("div", { class: "say-actions" }, edit, cancel)
  })()
  return el(
    "li",
    { class: `said ${w.state}`, attrs: { "data-n": String(w.n) } },
    el("p", { class: "said-head muted" }, `${w.n}. to ${w.seat} · ${stateWords(w)}`),
    el("p", { class: "said-text" }, w.text),
    (w.images ?? []).length === 0 ? null : el(
      "div",
      { class: "said-images" },
      ...(w.images ?? []).map((name) =>
        el(
          "a",
          { attrs: { href: Api.runImageUrl(r.id, name), target: "_blank", rel: "noopener" } },
          el("img", { class: "thumb", attrs: { src: Api.runImageUrl(r.id, name), alt: "an image you attached", loading: "lazy" } })
        )
      )
    ),
    actions,
    status
  )
}

/** The box, and the words said: a section of the run's page (`RUN_SECTIONS`). */
export const saySection = (r: RunDetail, ctx: { readonly reload: () => void }): Node | null => {
  const said = r.said ?? []
  const closed = OVER.has(r.status) || r.removed_at !== undefined
  if (closed && said.length === 0) return null
  const list = said.length === 0 ? null : el("ol", { class: "said-list" }, ...[...said].reverse().map((w) => wordItem(r, w, ctx.reload)))
  if (closed) return el("section", { class: "seat-say", attrs: { "aria-label": "Your words" } }, el("h4", {}, "Your words"), list)
  const text = el("textarea", { class: "say-text", attrs: { rows: "3", "aria-label": "Say to the seat", placeholder: "A word to the agent…" } })
  text.value = drafts.get(r.id) ?? ""
  text.addEventListener("input", () => drafts.set(r.id, text.value))
  const seats = r.seats.length <= 1 ? null : el(
    "select",
    { class: "say-seat", attrs: { "aria-label": "Seat" } },
    ...r.seats.map((s) => el("option", { attrs: { value: s.key } }, s.key))
  )
  const image = el("input", { class: "say-image", attrs: { type: "file", accept: "image/*", capture: "environment", "aria-label": "Attach an image" } })
  const kept = picked.get(r.id)
  if (kept !== undefined) {
    try {
      const dt = new DataTransfer()
      dt.items.add(kept)
      image.files = dt.files
    } catch {
      // A browser that cannot set a file input's files still sends the kept file; the input just looks empty.
    }
  }
  image.addEventListener("change", () => {
    const file = image.files?.[0]
    if (file === undefined) picked.delete(r.id)
    else picked.set(r.id, file)
  })
  const said0 = lastSaid.get(r.id)
  const status = el("p", {
    class: said0?.error === true ? "say-status notice error" : "say-status muted",
    attrs: { role: "status", hidden: said0 === undefined }
  }, said0?.text ?? "")
  const send = el("button", { class: "say-send", attrs: { type: "button" } }, "Send")
  send.addEventListener("click", () => {
    send.disabled = true
    status.hidden = false
    status.className = "say-status muted"
    status.textContent = "Sending…"
    const file = picked.get(r.id) ?? image.files?.[0]
    const uploaded = file === undefined ? Promise.resolve([]) : Api.uploadRunImage(r.id, file).then((u) => [u.name])
    uploaded.then((names) => Api.sayToSeat(r.id, text.value, seats?.value, names)).then(
      (done) => {
        drafts.delete(r.id)
        picked.delete(r.id)
        text.value = ""
        image.value = ""
        send.disabled = false
        status.textContent = done.said
        lastSaid.set(r.id, { text: done.said, error: false })
        ctx.reload()
      },
      (e: unknown) => {
        send.disabled = false
        status.className = "say-status notice error"
        status.textContent = `Not sent: ${message(e)}`
        lastSaid.set(r.id, { text: status.textContent, error: true })
      }
    )
  })
  return el(
    "section",
    { class: "seat-say", attrs: { "aria-label": "Your words to the seat" } },
    el("h4", {}, "Say to the seat"),
    el("p", { class: "muted" }, "Resumes the seat's session with your words, or queues them until its running turn ends."),
    seats,
    text,
    el("div", { class: "say-buttons" }, image, send),
    status,
    list
  )
}
