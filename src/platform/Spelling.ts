/**
 * "Did you mean": the one rule for a name typed wrong, whether a command, a
 * flag (`cli/CommandLine.ts`) or a config table or key (`MagiConfig.ts`).
 */

/**
 * Edit distance counting two swapped neighbours as one slip (optimal string
 * alignment), for "did you mean": `--prot` is one slip from `--port`, not two.
 */
const distance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

/**
 * The known name `typed` most likely meant: a unique one it starts, or the
 * nearest within a third of its length (a slip or two, never a different
 * word). Between two as near, the one that starts with the same letter:
 * a first letter is the one people rarely get wrong (`tsk` is `task`, not `ask`).
 */
export const closest = (typed: string, known: ReadonlyArray<string>): string | undefined => {
  const bare = (s: string) => s.replace(/^-+/, "").toLowerCase()
  const t = bare(typed)
  if (t === "") return undefined
  const started = known.filter((k) => bare(k).startsWith(t))
  if (started.length === 1) return started[0]
  let best: { name: string; d: number; sameStart: boolean } | undefined
  for (const k of known) {
    const d = distance(t, bare(k))
    if (d > Math.max(1, Math.floor(bare(k).length / 3))) continue
    const sameStart = bare(k)[0] === t[0]
    if (best === undefined || d < best.d || (d === best.d && sameStart && !best.sameStart)) best = { name: k, d, sameStart }
  }
  return best?.name
}
