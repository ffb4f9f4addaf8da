/**
 * Agent-written markdown (a question's detail and thread, a planning chat's
 * replies) as DOM nodes: one renderer for the whole page, on markdown-it.
 *
 * The text is untrusted, so three things hold whatever it says:
 * - raw HTML is off (`html: false`): `<img onerror=…>` and `<script>` come
 *   out as those characters;
 * - a link is a link only to http(s) or mailto, opens a new tab, and tells
 *   the target neither who sent the owner there nor a handle back to the page
 *   (`noopener noreferrer`); anything else (`javascript:`, a relative path)
 *   stays text, and images are not rendered at all (a remote image is a
 *   beacon: it would tell a third party when the owner read the question);
 * - markdown-it's output is parsed inertly (in a template: nothing in it
 *   loads or runs) and copied into the page through an allowlist of elements
 *   and attributes, so even a renderer bug cannot smuggle in a handler.
 *
 * The page loads this module after its first screen (`richText.ts`), as a
 * chunk of its own; it imports nothing of the page's, so the page's own
 * script needs no second file to start.
 */
import MarkdownIt from "markdown-it"

const LINK_SCHEMES = /^(https?:|mailto:)/i

const md = new MarkdownIt({ html: false, linkify: true, typographer: false })
md.disable("image")
md.validateLink = (url) => LINK_SCHEMES.test(url.trim())

/** The elements markdown-it makes from markdown with HTML off, and only those. */
const ALLOWED = new Set([
  "p",
  "br",
  "hr",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "pre",
  "code",
  "em",
  "strong",
  "s",
  "a",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td"
])

/** `[ ] ` / `[x] ` opening a list item: a task list, shown as a (disabled) checkbox. */
const CHECK = /^\[([ xX])\]\s+/

/**
 * Headings in agent text are sections of one card or bubble, below the
 * card's own title: `#` becomes h4, and deeper levels stop at h6.
 */
const HEADING_SHIFT = 3

const copy = (node: Node): Node | null => {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent ?? "")
  if (!(node instanceof Element)) return null
  const tag = node.tagName.toLowerCase()
  const children = [...node.childNodes].map(copy)
  // Anything unexpected shows as its text, never as itself.
  if (!ALLOWED.has(tag)) return document.createTextNode(node.textContent ?? "")
  const heading = /^h([1-6])$/.exec(tag)
  const name = heading === null ? tag : `h${Math.min(6, Number(heading[1]) + HEADING_SHIFT)}`
  const out = document.createElement(name)
  if (tag === "a") {
    const href = node.getAttribute("href") ?? ""
    if (!LINK_SCHEMES.test(href)) return document.createTextNode(node.textContent ?? "")
    out.setAttribute("href", href)
    out.setAttribute("target", "_blank")
    out.setAttribute("rel", "noopener noreferrer")
  }
  if (tag === "ol") {
    const start = node.getAttribute("start")
    if (start !== null && /^\d+$/.test(start)) out.setAttribute("start", start)
  }
  if (tag === "code") {
    // Fenced code says its language as `language-x`; kept as a class name only.
    const lang = /(?:^|\s)language-([A-Za-z0-9_-]+)/.exec(node.getAttribute("class") ?? "")?.[1]
    if (lang !== undefined) out.className = `language-${lang.toLowerCase()}`
  }
  if (tag === "th" || tag === "td") {
    const align = /text-align:(left|right|center)/.exec(node.getAttribute("style") ?? "")?.[1]
    if (align !== undefined) out.className = `align-${align}`
  }
  for (const child of children) if (child !== null) out.append(child)
  if (tag === "li") checkbox(out)
  return out
}

/** A task-list item: its leading `[ ]`/`[x]` as a disabled checkbox. */
const checkbox = (li: HTMLElement) => {
  const host = li.firstElementChild?.tagName === "P" ? li.firstElementChild : li
  const first = host.firstChild
  if (first === null || first.nodeType !== Node.TEXT_NODE) return
  const m = CHECK.exec(first.textContent ?? "")
  if (m === null) return
  first.textContent = (first.textContent ?? "").slice(m[0].length)
  const box = document.createElement("input")
  box.setAttribute("type", "checkbox")
  box.setAttribute("disabled", "")
  if (m[1] !== " ") box.setAttribute("checked", "")
  host.insertBefore(box, first)
  host.insertBefore(document.createTextNode(" "), first)
  li.classList.add("check")
}

/** Render `source` as a fragment of block elements. */
export const markdown = (source: string): DocumentFragment => {
  // A template's content is inert: its images do not load and its scripts
  // do not run (and it costs less than a whole parsed document per block).
  const parsed = document.createElement("template")
  parsed.innerHTML = md.render(source)
  const root = document.createDocumentFragment()
  for (const node of [...parsed.content.childNodes]) {
    const copied = copy(node)
    if (copied !== null) root.append(copied)
  }
  return root
}
