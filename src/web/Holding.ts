/**
 * Who is on the other end of a question, as the owner sees it: the `holder`
 * of the web's question view. Shared by the server (which reads the leases)
 * and the phone page (which words it), so both agree on which questions can
 * have anyone waiting at all.
 */
// Not from Question.js: its schema would bring Effect into the page's bundle.
import { awaitsAgent } from "../questions/Awaits.js"
import type { Question } from "../questions/Question.js"

/** `asker`: the agent's own `magi ask` is waiting; `daemon`: magi is delivering; `nobody`: no one is. */
export type Holder = "asker" | "daemon" | "nobody"

/**
 * Could anyone be waiting on `q`? Only while it is open, or answered and the
 * agent has not read the answer yet; and only if an agent's `magi ask` filed
 * it (it recorded a working directory: the leases came with that field).
 * Everything else is history, and its holder is `nobody` without a look at
 * the disk, so a long history costs no lease reads.
 */
export const mayBeHeld = (q: Question): boolean => q.cwd !== "" && awaitsAgent(q)
