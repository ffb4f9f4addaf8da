/**
 * The frame an agent's panel is shown in, sized to the panel.
 *
 * A panel is untrusted HTML, so its frame runs nothing: `sandbox` without
 * `allow-scripts` blocks every script, inline handler, `javascript:` URL and
 * `<meta http-equiv="refresh">` in it and in anything it navigates to, and
 * the panel's own policy (`PANEL_CSP`) forbids scripts a second time. Its
 * height cannot be measured from inside, then; this page measures it from
 * outside, which needs the frame's document to be readable here:
 * `allow-same-origin`. That gives the panel nothing it could use, since it
 * can run no code to reach this page, its cookies or its storage (the
 * "Open the panel full size" link already shows it same-origin, under the
 * same policy). The pair `allow-scripts allow-same-origin` would be
 * the one fatal sandbox (the panel could lift its own sandbox): never add
 * `allow-scripts` here.
 *
 * Scripts in a frame with an opaque origin posting their height
 * (`allow-scripts` alone) would re-enable the meta refresh the sandbox
 * otherwise blocks: a panel could send its frame to any address and run
 * that page's script there.
 */
export const PANEL_SANDBOX = "allow-same-origin"

/** A frame is never taller than this, whatever the panel says: then it scrolls inside. The CSS caps it lower on a phone. */
export const PANEL_MAX_PX = 4_000

/**
 * `document.documentElement` through the prototype's own getter: a panel's
 * `<img name="documentElement">` shadows the property on its document (named
 * elements do, with no script at all), never the getter.
 */
const documentElementOf = (doc: Document): Element | null =>
  // Looked up when a panel is measured, not when this module loads: the
  // page's views are also imported where there is no DOM (unit tests).
  Object.getOwnPropertyDescriptor(Document.prototype, "documentElement")!.get!.call(doc) as Element | null

/** The height the frame takes for content `content` px tall: its 1 px borders included, within the sane maximum. */
export const frameHeight = (content: number): number => Number.isFinite(content) && content > 0 ? Math.min(Math.ceil(content), PANEL_MAX_PX) + 2 : 2

/**
 * Size `frame` to its document's content: collapsed for a moment so the
 * document's height is its content's, not the frame's (`html{height:100%}`
 * would otherwise keep whatever height it was given), then set, in one task
 * so nothing is painted in between. The CSS `max-height` caps what a phone
 * shows; past it the panel scrolls inside its frame.
 */
export const fitPanel = (frame: HTMLIFrameElement): void => {
  const doc = frame.contentDocument
  if (doc === null) return
  const root = documentElementOf(doc)
  if (root === null) return
  frame.style.height = "0px"
  frame.style.height = `${frameHeight(root.scrollHeight)}px`
}

/**
 * A frame for the panel at `url` that fits its content once loaded (images
 * included: `load` waits for them) and again when its width changes (a
 * phone turned, a window resized), since the panel's text reflows.
 */
export const panelFrame = (url: string, title: string): HTMLIFrameElement => {
  const frame = document.createElement("iframe")
  frame.setAttribute("sandbox", PANEL_SANDBOX)
  frame.setAttribute("src", url)
  frame.setAttribute("title", title)
  frame.setAttribute("referrerpolicy", "no-referrer")
  frame.setAttribute("loading", "lazy")
  frame.addEventListener("load", () => fitPanel(frame))
  let width = -1
  new ResizeObserver(() => {
    // Fitting changes the height, which this observer also reports: only a new width reflows the panel.
    if (frame.clientWidth === width) return
    width = frame.clientWidth
    if (frame.contentDocument?.readyState === "complete") fitPanel(frame)
  }).observe(frame)
  return frame
}
