/**
 * What a model stand-in counts of the requests it served: each model
 * request's time and size, so a bench can tell how many requests an hour of
 * waiting costs and how much input each one carries.
 *
 * Input is counted in bytes of the request body as sent (the conversation,
 * the system prompt and the tool definitions, as JSON): a stand-in has no
 * tokenizer, and the body is exactly what a real API would read and bill as
 * input. `tokensOf` gives the usual estimate of about four bytes a token.
 */
export interface Metered {
  /** Milliseconds since the epoch. */
  readonly at: number
  /** The request body's length in bytes. */
  readonly bytes: number
  /** The agent's own turn (tools offered), not a side request such as a session title. */
  readonly agent: boolean
}

export interface Meter {
  readonly metered: ReadonlyArray<Metered>
}

/** A fresh log for a stand-in to append to. */
export const newMeter = (): { readonly metered: Metered[]; readonly note: (bytes: number, agent: boolean) => void } => {
  const metered: Metered[] = []
  return { metered, note: (bytes, agent) => metered.push({ at: Date.now(), bytes, agent }) }
}

/** About four bytes of English or JSON a token, the usual rule of thumb for BPE tokenizers. */
export const BYTES_PER_TOKEN = 4
export const tokensOf = (bytes: number): number => Math.round(bytes / BYTES_PER_TOKEN)

/** The agent requests made in `[from, to)`: how many, and their input bytes. */
export const within = (m: Meter, from: number, to: number): { readonly requests: number; readonly bytes: number; readonly sizes: ReadonlyArray<number> } => {
  const inside = m.metered.filter((r) => r.agent && r.at >= from && r.at < to)
  return { requests: inside.length, bytes: inside.reduce((a, r) => a + r.bytes, 0), sizes: inside.map((r) => r.bytes) }
}
