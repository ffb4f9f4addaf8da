/**
 * Building the page from API data without ever parsing it as markup.
 *
 * Every string an agent wrote (summary, detail, choices, thread) reaches the
 * page as a text node or an attribute value, never through `innerHTML`: a
 * question is untrusted input, and "the agent put a `<script>` in its
 * summary" must render as those characters.
 */

type Child = Node | string | null | undefined | false

export interface Props {
  readonly class?: string
  /** Set with `setAttribute`; `true` sets an empty attribute, `false` omits it. */
  readonly attrs?: Readonly<Record<string, string | boolean>>
  readonly on?: { readonly [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void }
}

export const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  if (props.class !== undefined) node.className = props.class
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === true) node.setAttribute(name, "")
    else if (value !== false) node.setAttribute(name, value)
  }
  for (const [type, handler] of Object.entries(props.on ?? {})) {
    node.addEventListener(type, handler as EventListener)
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    node.append(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return node
}

/**
 * magi's own sentences with a command in backticks (`magi serve`), as text
 * with each command in a `<code>`: the page shows the command as code, never
 * the backticks. For magi's fixed words only; agent text goes through
 * markdown or stays plain.
 */
export const withCode = (text: string): ReadonlyArray<Node | string> =>
  text.split("`").map((part, i) => (i % 2 === 1 ? el("code", {}, part) : part)).filter((part) => part !== "")
