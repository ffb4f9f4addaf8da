/**
 * Who implements and who judges, and in what order each judge sees the
 * candidates: pure, and reproducible from the run's seed (`magi run --seed N`
 * repeats a competition's labels and orders exactly).
 */

/** A small seeded generator (mulberry32): the same seed, the same sequence, on every machine. */
export const generator = (seed: number): () => number => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `items` in a seeded order (Fisher–Yates). */
export const shuffle = <A>(items: ReadonlyArray<A>, seed: number): ReadonlyArray<A> => {
  const next = generator(seed)
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** `A`, `B`, … `Z`, then `AA`…: as many labels as candidates. */
export const labels = (n: number): ReadonlyArray<string> =>
  Array.from(
    { length: n },
    (_, i) => (i < 26 ? String.fromCharCode(65 + i) : `${String.fromCharCode(65 + Math.floor(i / 26) - 1)}${String.fromCharCode(65 + (i % 26))}`)
  )

/** `n` agents from `pool`, in order, cycled. */
export const cycled = (pool: ReadonlyArray<string>, n: number): ReadonlyArray<string> =>
  pool.length === 0 ? [] : Array.from({ length: n }, (_, i) => pool[i % pool.length]!)

/**
 * The candidates' labels and agents: the implementers in order, cycled, then
 * shuffled by the seed, so which agent is `A` says nothing about the roster.
 */
export const assign = (implementers: ReadonlyArray<string>, n: number, seed: number): ReadonlyArray<{ readonly label: string; readonly agent: string }> => {
  const agents = shuffle(cycled(implementers, n), seed)
  return labels(agents.length).map((label, i) => ({ label, agent: agents[i]! }))
}

/**
 * The judges' agents: `pool` rotated so that, where the roster allows, judge
 * i is not the agent of candidate i (`authors`, in label order). Agents that
 * wrote no candidate are preferred first; then the first rotation with no
 * judge facing its own candidate in its position; else each judge the
 * least-used agent that is not its candidate's author.
 */
export const judgeAgents = (pool: ReadonlyArray<string>, authors: ReadonlyArray<string>, m: number): ReadonlyArray<string> => {
  if (pool.length === 0) return []
  const outsiders = pool.filter((a) => !authors.includes(a))
  if (outsiders.length >= m) return outsiders.slice(0, m)
  for (let r = 1; r <= pool.length; r++) {
    const seats = Array.from({ length: m }, (_, i) => pool[(i + r) % pool.length]!)
    if (seats.every((a, i) => a !== authors[i])) return seats
  }
  // No rotation fits: a distinct agent per judge, none its candidate's author, by a small search.
  if (m <= pool.length) {
    const pickFrom = (i: number, taken: ReadonlyArray<string>): ReadonlyArray<string> | null => {
      if (i === m) return taken
      for (const a of pool)
        if (a !== authors[i] && !taken.includes(a)) {
          const rest = pickFrom(i + 1, [...taken, a])
          if (rest !== null) return rest
        }
      return null
    }
    const found = pickFrom(0, [])
    if (found !== null) return found
  }
  // Else each judge the least-used agent that is not its candidate's author.
  const used = new Map(pool.map((a) => [a, 0]))
  return Array.from({ length: m }, (_, i) => {
    const fits = pool.filter((a) => a !== authors[i])
    const from = fits.length > 0 ? fits : pool
    const agent = [...from].sort((a, b) => used.get(a)! - used.get(b)!)[0]!
    used.set(agent, used.get(agent)! + 1)
    return agent
  })
}

/** The order judge `index` (from 0) sees the labels in: its own shuffle of the same seed. */
export const orderFor = (candidateLabels: ReadonlyArray<string>, seed: number, index: number): ReadonlyArray<string> =>
  shuffle(candidateLabels, (seed + 0x9e3779b9 * (index + 1)) >>> 0)

/**
 * Who takes over a seat whose agent hit its usage limit: the next agent
 * after `current` in `[roles] implementers`, going round, that has not held
 * the seat yet (`tried`); none when every implementer has.
 */
export const fallbackAgent = (implementers: ReadonlyArray<string>, current: string, tried: ReadonlyArray<string>): string | undefined => {
  const at = implementers.indexOf(current)
  for (let i = 1; i <= implementers.length; i++) {
    const next = implementers[(at + i) % implementers.length]!
    if (next !== current && !tried.includes(next)) return next
  }
  return undefined
}
