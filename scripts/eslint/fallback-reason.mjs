// A local ESLint rule (issue 26, point 2): a failure turned into a value is
// how a failed read becomes "nothing there" right before a write. So
// `Effect.orElseSucceed`, `catchAll`, `catchAllCause`, `orElse` and
// `ignore` each say why they are safe where they stand, in a comment on
// their line or right above it:
//
//   // display: <why>   a read-only path (a page, a listing, a log line)
//   // fallback: <why>  a deliberate default that never feeds a write
//
// A use on a write path is not annotated but fixed: `catchTag` on the exact
// "absent" error (RecordNotFound…), and the rest propagates.

/** The Effect combinators that swallow a failure. */
export const SWALLOWING = new Set(["orElseSucceed", "catchAll", "catchAllCause", "orElse", "ignore"])

/** `display: <why>` or `fallback: <why>`, with a reason. */
const REASON = /^\s*(display|fallback):\s*\S/

/** The comments that speak for a line: on it, and the run of comment lines right above it. */
const commentsFor = (sourceCode, line) => {
  const byLine = new Map()
  for (const c of sourceCode.getAllComments()) {
    for (let l = c.loc.start.line; l <= c.loc.end.line; l++) byLine.set(l, [...(byLine.get(l) ?? []), c])
  }
  const lines = sourceCode.lines
  const found = [...(byLine.get(line) ?? [])]
  for (let l = line - 1; l >= 1; l--) {
    const text = lines[l - 1].trim()
    const here = byLine.get(l)
    // Only whole comment lines continue the run (a line of code ends it).
    if (here === undefined || !(text.startsWith("//") || text.startsWith("/*") || text.startsWith("*"))) break
    found.push(...here)
  }
  return found
}

export const fallbackReason = {
  meta: {
    type: "problem",
    docs: { description: "a swallowed Effect failure says why it is safe: `// display: <why>` or `// fallback: <why>`" },
    schema: [],
    messages: {
      unexplained:
        "Effect.{{name}} turns a failure into a value: say why that is safe with `// display: <why>` (a read-only path) or `// fallback: <why>` (a default that never feeds a write) on this line or right above it; before a write, catch the exact error (catchTag) instead",
      empty: "the `{{kind}}:` comment above Effect.{{name}} gives no reason: say why in a few words"
    }
  },
  create(context) {
    const sourceCode = context.sourceCode
    return {
      MemberExpression(node) {
        if (node.computed || node.object.type !== "Identifier" || node.object.name !== "Effect") return
        if (node.property.type !== "Identifier" || !SWALLOWING.has(node.property.name)) return
        const name = node.property.name
        const comments = commentsFor(sourceCode, node.loc.start.line)
        if (comments.some((c) => REASON.test(c.value))) return
        const bare = comments.map((c) => /^\s*(display|fallback):\s*$/.exec(c.value)).find((m) => m !== null)
        if (bare) context.report({ node, messageId: "empty", data: { name, kind: bare[1] } })
        else context.report({ node, messageId: "unexplained", data: { name } })
      }
    }
  }
}

/** The plugin eslint.config.mjs loads as `magi`. */
export default { meta: { name: "magi-local" }, rules: { "fallback-reason": fallbackReason } }
