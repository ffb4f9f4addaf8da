/**
 * Agent-written markdown in the page, without making the first screen wait
 * for its renderer.
 *
 * markdown-it and its tables were two thirds of the page's script, and
 * parsing and starting them held the first screen back by a third of a
 * second on a phone-speed CPU. So the renderer (`markdown.ts`) is a chunk of
 * its own, fetched once the first screen is drawn (`loadMarkdown`). A block
 * built before it arrives shows the text as written, paragraph by paragraph,
 * and is rendered in place when it does: the card around it is not rebuilt,
 * so a draft being typed or a panel loading is untouched.
 */
import { el } from "./dom.js"

type Render = (source: string) => DocumentFragment

let render: Render | undefined
/** Blocks shown as plain text, waiting for the renderer. */
const pending = new Map<HTMLElement, string>()
let loading: Promise<void> | undefined

/** The source as plain paragraphs (blank lines between them), its line breaks kept. */
const plain = (source: string): ReadonlyArray<HTMLElement> =>
  source
    .split(/\n[ \t]*\n+/)
    .filter((p) => p.trim() !== "")
    .map((p) => el("p", {}, p))

/**
 * A `div` with `className` holding `source` as markdown: rendered now when
 * the renderer is in, else as plain text (class `pending`) until it is.
 */
export const markdownBlock = (className: string, source: string): HTMLElement => {
  const node = el("div", { class: className })
  if (render !== undefined) node.append(render(source))
  else {
    node.classList.add("pending")
    node.append(...plain(source))
    pending.set(node, source)
  }
  return node
}

/**
 * Fetch the renderer (once) and render every block waiting for it. A failed
 * fetch (the server restarted into another build whose chunk has another
 * name) leaves the text plain and lets a later call try again.
 */
export const loadMarkdown = (): Promise<void> => (loading ??= import("./markdown.js").then(
  (module) => {
    render = module.markdown
    for (const [node, source] of pending) {
      node.replaceChildren(module.markdown(source))
      node.classList.remove("pending")
    }
    pending.clear()
  },
  () => {
    loading = undefined
  }
))
