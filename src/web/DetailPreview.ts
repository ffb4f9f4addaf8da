/**
 * The question lists (`GET /api/questions`, its history pages) send each
 * detail cut to a preview: the list is sent again to every phone on every
 * change, and one agent's 250 KB log pasted into a detail made every change
 * cost every phone 260 KB. The card's folded detail shows at most 15em (about
 * ten lines, some 1,200 characters on a wide screen), so a 2,000-character
 * preview fills it on any screen; a detail shorter than that is sent whole
 * and never needs a second request. A cut detail says so (`detail_cut`),
 * and the card fetches the whole question (`GET /api/questions/{id}`) when
 * the owner opens it.
 */
/** Characters of a detail the lists send. */
export const DETAIL_PREVIEW_CHARS = 2000

/** The start of `text`, at most `max` characters, never half of a surrogate pair. */
export const previewOf = (text: string, max: number = DETAIL_PREVIEW_CHARS): string => {
  if (text.length <= max) return text
  const cut = text.slice(0, max)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** `q` as a list sends it: its detail cut to the preview, flagged when it was. */
/** Generic over the view, so this module needs nothing of `Snapshot.ts` (which imports it). */
export const listed = <Q extends { readonly detail: string; readonly detail_cut?: boolean | undefined }>(q: Q): Q =>
  q.detail.length <= DETAIL_PREVIEW_CHARS ? q : { ...q, detail: previewOf(q.detail), detail_cut: true }
