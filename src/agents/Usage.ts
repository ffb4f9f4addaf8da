/**
 * What a turn cost, as its CLI reports it: tokens in and out, and the cost
 * when the CLI says one (claude's result JSON has `total_cost_usd`,
 * opencode's step has `cost`; codex reports tokens only). Per seat, the
 * turns' sum and each turn, so `magi show`, the run page and `magi stats`
 * read one record.
 *
 * Import-free: the page's script formats it with `usageWords`.
 */

/** One turn's usage; `input_tokens` counts the prompt's tokens, cached ones included. */
export interface TurnUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  /** US dollars as the CLI reported them; null when it reports none. */
  readonly cost_usd: number | null
  /**
   * The context the turn ended with, where the CLI says it: the last model
   * request's prompt tokens (claude's last `assistant` event), and the
   * model's window (claude's `modelUsage[…].contextWindow`). On a seat: its
   * latest turn's.
   */
  readonly context_tokens?: number | undefined
  readonly context_window?: number | undefined
}

/** A seat's usage: the sum of its turns, and each turn (the newest `TURNS_KEPT`). */
export interface SeatUsage extends TurnUsage {
  readonly turns: ReadonlyArray<TurnUsage & { readonly turn: number }>
}

/** Turns kept one by one on a seat: a seat resumed all week must not grow its record without bound; the sum keeps counting. */
export const TURNS_KEPT = 100

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0)
const field = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)

/** claude's `--output-format json` result: `usage` (input, cache creation and cache reads, output) and `total_cost_usd`. */
export const ofClaudeResult = (result: unknown): TurnUsage | undefined => {
  const u = field(result, "usage")
  if (u === undefined) return undefined
  const cost = field(result, "total_cost_usd")
  return {
    input_tokens: num(field(u, "input_tokens")) + num(field(u, "cache_creation_input_tokens")) + num(field(u, "cache_read_input_tokens")),
    output_tokens: num(field(u, "output_tokens")),
    cost_usd: typeof cost === "number" && Number.isFinite(cost) ? cost : null
  }
}

/**
 * claude's stream: the context its turn ended with. The result's `usage`
 * sums every request of the turn, so the context is the last `assistant`
 * event's own `usage` (a request's prompt: input, cache creation and cache
 * reads); the window is the model's, from the result's `modelUsage`.
 */
export const claudeContext = (events: ReadonlyArray<unknown>, result: unknown): Pick<TurnUsage, "context_tokens" | "context_window"> => {
  const last = events.findLast((e) => field(e, "type") === "assistant" && field(field(field(e, "message"), "usage"), "input_tokens") !== undefined)
  const u = field(field(last, "message"), "usage")
  const models = field(result, "modelUsage")
  const windows = typeof models === "object" && models !== null ? Object.values(models).map((m) => num(field(m, "contextWindow"))) : []
  const window = Math.max(0, ...windows)
  return {
    ...(u === undefined
      ? {}
      : { context_tokens: num(field(u, "input_tokens")) + num(field(u, "cache_creation_input_tokens")) + num(field(u, "cache_read_input_tokens")) }),
    ...(window > 0 ? { context_window: window } : {})
  }
}

/** codex's `exec --json` events: each `turn.completed` carries `usage` (`input_tokens`, cached ones within it, `output_tokens`); no cost. */
export const ofCodexEvents = (events: ReadonlyArray<unknown>): TurnUsage | undefined => {
  const counted = (u: unknown) => typeof field(u, "input_tokens") === "number" || typeof field(u, "output_tokens") === "number"
  const done = events.filter((e) => field(e, "type") === "turn.completed" && counted(field(e, "usage")))
  if (done.length === 0) return undefined
  return {
    input_tokens: done.reduce((n: number, e) => n + num(field(field(e, "usage"), "input_tokens")), 0),
    output_tokens: done.reduce((n: number, e) => n + num(field(field(e, "usage"), "output_tokens")), 0),
    cost_usd: null
  }
}

/** opencode's `run --format json` events: each `step_finish` part has `tokens` (`input`, `output`, `reasoning`, `cache.read`/`write`) and `cost`. */
export const ofOpencodeEvents = (events: ReadonlyArray<unknown>): TurnUsage | undefined => {
  const steps = events.map((e) => field(e, "part")).filter((p) => field(p, "type") === "step-finish" && field(p, "tokens") !== undefined)
  if (steps.length === 0) return undefined
  const t = (p: unknown, k: string) => num(field(field(p, "tokens"), k))
  const cache = (p: unknown, k: string) => num(field(field(field(p, "tokens"), "cache"), k))
  const costs = steps.map((p) => field(p, "cost")).filter((c): c is number => typeof c === "number" && Number.isFinite(c))
  return {
    input_tokens: steps.reduce((n: number, p) => n + t(p, "input") + cache(p, "read") + cache(p, "write"), 0),
    output_tokens: steps.reduce((n: number, p) => n + t(p, "output") + t(p, "reasoning"), 0),
    cost_usd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0)
  }
}

const pickContext = (u: TurnUsage): Pick<TurnUsage, "context_tokens" | "context_window"> => ({
  ...(u.context_tokens === undefined ? {} : { context_tokens: u.context_tokens }),
  ...(u.context_window === undefined ? {} : { context_window: u.context_window })
})

/** The seat's usage with turn `turn`'s added; a turn the CLI reported nothing for leaves it as it was. */
export const withTurn = (seat: SeatUsage | undefined, turn: number, used: TurnUsage | undefined): SeatUsage | undefined => {
  if (used === undefined) return seat
  const before = seat ?? { input_tokens: 0, output_tokens: 0, cost_usd: null, turns: [] }
  const cost = before.cost_usd === null && used.cost_usd === null ? null : (before.cost_usd ?? 0) + (used.cost_usd ?? 0)
  return {
    input_tokens: before.input_tokens + used.input_tokens,
    output_tokens: before.output_tokens + used.output_tokens,
    cost_usd: cost,
    // The context is not a sum: the seat's is its latest turn's, when that turn said one.
    ...(used.context_tokens === undefined
      ? pickContext(before)
      : { context_tokens: used.context_tokens, ...(used.context_window === undefined ? {} : { context_window: used.context_window }) }),
    turns: [...before.turns, { turn, ...used }].slice(-TURNS_KEPT)
  }
}

const count = (n: number) => (n < 10_000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(2)}M`)

const contextWords = (u: TurnUsage): string =>
  u.context_tokens === undefined
    ? ""
    : `, context ${count(u.context_tokens)}${u.context_window === undefined ? "" : ` of ${count(u.context_window)}`}`

/** `12.3k tokens in, 456 out, $0.0123, context 8.2k of 200.0k`: what `magi show` and the page say. */
export const usageWords = (u: TurnUsage): string =>
  `${count(u.input_tokens)} tokens in, ${count(u.output_tokens)} out${u.cost_usd === null ? "" : `, $${u.cost_usd.toFixed(4)}`}${contextWords(u)}`
