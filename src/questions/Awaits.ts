/**
 * Whether an agent is still owed something by a question: a rule of the
 * question's own, in a module that imports nothing, because the phone page
 * needs it too and must not pull the schema library (Effect, ~280 KB
 * minified, evaluated before the page can draw) into its bundle.
 */

/**
 * Does the asking agent still have something coming from this question? Open,
 * or answered but the answer never reached it. The run behind it is not
 * finished, the daemon may still carry it, and someone may be holding it.
 */
export const awaitsAgent = (q: { readonly status: string; readonly answer_delivered: boolean }): boolean =>
  q.status === "open" || (q.status === "answered" && !q.answer_delivered)
