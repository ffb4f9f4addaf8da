/**
 * Which signal stopped the command, if one did. The runtime turns SIGINT and
 * SIGTERM alike into an interruption; the owner (or the agent's tool) needs
 * to know which, in the message and in the exit code (128 + the signal's
 * number, as a shell reports it).
 */
let received: NodeJS.Signals | undefined

const NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 }

/** Start noting the first SIGINT or SIGTERM; the runtime's own handlers still stop the command. */
export const noteSignals = () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void (received ??= signal))
}

export const receivedSignal = (): NodeJS.Signals | undefined => received

/** 130 for SIGINT, 143 for SIGTERM; 130 when interrupted some other way. */
export const interruptExitCode = (): number => 128 + (received === undefined ? 2 : (NUMBERS[received] ?? 2))
