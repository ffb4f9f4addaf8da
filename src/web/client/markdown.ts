/**
 * An agent's reply as markdown, built as DOM nodes and never parsed as HTML:
 * the reply is agent-written, so `<img onerror=…>` in it must show as those
 * characters. Covers what a planning interviewer writes — paragraphs,
 * headings, lists and checkboxes, quotes, fenced code, `code`, **bold** and
 * *emphasis* — and shows anything else as the text it is. Links stay text:
 * a tap on the phone page should never leave it for a place an agent chose.
 */
import { el } from "./dom.js"

/** `code`, **bold**, *em* / _em_ within one line of text. */
const inline = (text: string): Array<Node> => {
  const out: Array<Node> = []
  const pattern = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_]*?)_(?![\w_])/g
  let last = 0
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)))
    if (m[2] !== undefined) out.push(el("code", {}, m[2]))
    else if (m[3] !== undefined) out.push(el("strong", {}, ...inline(m[3])))
    else out.push(el("em", {}, ...inline(m[4] ?? m[5] ?? "")))
    last = m.index + m[0].length
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)))
  return out
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([^`\s]*)\s*$/
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/
const BULLET = /^\s*[-*+]\s+(.*)$/
const ORDERED = /^\s*\d+[.)]\s+(.*)$/
const CHECK = /^\[([ xX])\]\s*(.*)$/
const QUOTE = /^\s*>\s?(.*)$/

/** A list item's content, with a (disabled) checkbox for `[ ]` / `[x]`. */
const item = (text: string) => {
  const check = CHECK.exec(text)
  if (check === null) return el("li", {}, ...inline(text))
  const box = el("input", { attrs: { type: "checkbox", disabled: true, checked: check[1] !== " " } })
  return el("li", { class: "check" }, box, " ", ...inline(check[2] ?? ""))
}

/** Render `source` as a fragment of block elements. */
export const markdown = (source: string): DocumentFragment => {
  const lines = source.replace(/\r\n?/g, "\n").split("\n")
  const root = document.createDocumentFragment()
  let paragraph: string[] = []
  const flush = () => {
    if (paragraph.length === 0) return
    const p = el("p")
    paragraph.forEach((line, i) => {
      if (i > 0) p.append(el("br"))
      p.append(...inline(line))
    })
    root.append(p)
    paragraph = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const fence = FENCE.exec(line)
    if (fence !== null) {
      flush()
      const body: string[] = []
      let j = i + 1
      for (; j < lines.length; j++) {
        const close = FENCE.exec(lines[j]!)
        if (close !== null && close[2] === "" && close[1]![0] === fence[1]![0] && close[1]!.length >= fence[1]!.length) break
        body.push(lines[j]!)
      }
      const lang = fence[2] ?? ""
      root.append(el("pre", { class: lang === "" ? "code" : `code lang-${lang.toLowerCase().replace(/[^a-z0-9-]/g, "")}` }, el("code", {}, body.join("\n"))))
      i = j
      continue
    }
    if (line.trim() === "") {
      flush()
      continue
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      flush()
      // Headings inside a bubble are small: h4 and below, whatever the level.
      const level = Math.min(6, heading[1]!.length + 3) as 4 | 5 | 6
      root.append(el(`h${level}`, {}, ...inline(heading[2]!)))
      continue
    }
    const bullet = BULLET.exec(line)
    const ordered = bullet === null ? ORDERED.exec(line) : null
    if (bullet !== null || ordered !== null) {
      flush()
      const list = el(bullet !== null ? "ul" : "ol")
      const pattern = bullet !== null ? BULLET : ORDERED
      let j = i
      for (; j < lines.length; j++) {
        const m = pattern.exec(lines[j]!)
        if (m === null) break
        list.append(item(m[1]!))
      }
      root.append(list)
      i = j - 1
      continue
    }
    const quote = QUOTE.exec(line)
    if (quote !== null) {
      flush()
      const quoted: string[] = []
      let j = i
      for (; j < lines.length; j++) {
        const m = QUOTE.exec(lines[j]!)
        if (m === null) break
        quoted.push(m[1]!)
      }
      root.append(el("blockquote", {}, markdown(quoted.join("\n"))))
      i = j - 1
      continue
    }
    paragraph.push(line)
  }
  flush()
  return root
}
