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
export const owedToAgent = (q: { readonly status: string; readonly answer_delivered: boolean }): boolean =>
  q.status === "open" || (q.status === "answered" && !q.answer_delivered)

/**
 * The node (and seat) of a question the conductor filed: nobody's `magi ask`
 * waits on it; a deputy may keep the owner company on it.
 */
export const CONDUCTOR_NODE = "conduct"

/**
 * Asked by an agent's `magi ask` outside any magi run (from a plain shell):
 * no daemon can resume such an agent, so what the owner says to it is kept
 * on the question for the agent's next `magi ask --wait`, which reads it
 * whenever it comes. Nothing is "not delivered" before the question's
 * deadline. A conductor's question is nobody's ask and is not one of these.
 */
export const keptForNextWait = (q: { readonly run: string; readonly cwd: string; readonly node: string }): boolean =>
  q.run === "" && q.cwd !== "" && q.node !== CONDUCTOR_NODE
