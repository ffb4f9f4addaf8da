/**
 * Who is on the other end of a question, as the owner sees it: the `holder`
 * of the web's question view. Shared by the web server (which reads the
 * leases), `magi answer` and the phone page (which word it), so all agree on
 * which questions can have anyone waiting at all.
 */
// Not from Question.js: its schema would bring Effect into the page's bundle.
import { owedToAgent, CONDUCTOR_NODE } from "./Owed.js"
export { keptForNextWait } from "./Owed.js"
import type { Question } from "./Question.js"

/**
 * `asker`: the agent's own `magi ask` is waiting; `daemon`: magi is
 * delivering; `deputy`: a deputy is keeping the owner company on a conductor
 * question; `nobody`: no one is.
 */
export type Holder = "asker" | "daemon" | "deputy" | "nobody"

/**
 * Could anyone be waiting on `q`? Only while it is open, or answered and the
 * agent has not read the answer yet; and only if an agent's `magi ask` filed
 * it (it recorded a working directory: the leases came with that field).
 * An open conductor question may be held too, by its deputy. Everything
 * else is history, and its holder is `nobody` without a look at the disk, so
 * a long history costs no lease reads.
 */
export const mayBeHeld = (q: Question): boolean => (q.cwd !== "" && owedToAgent(q)) || isConductorQuestion(q)

/** An open question the conductor filed: nobody's ask waits on it, but a deputy may be with the owner. */
export const isConductorQuestion = (q: Question): boolean => q.node === CONDUCTOR_NODE && q.status === "open"
