// The cost of waiting: model requests and input per hour of waiting on the
// owner, per agent CLI (the pinned claude, codex, opencode, on their local
// model stand-ins: test/compat/waitCost.ts), for the shell form (`magi ask`
// in the CLI's shell tool) and the MCP form (magi's `ask`/`wait` tools),
// polling (`wait = "poll"`, the way before) and ending the turn
// (`wait = "end-turn"`).
//
// Each case waits MAGI_BENCH_WINDOW_S seconds of real time (120) after the
// question is filed, with short slices (MAGI_BENCH_SLICE, 10 s; codex's
// shell keeps its default 7 s), then the owner answers with `magi answer`
// and `magi serve` (running throughout) or the waiting call brings it back.
//
// Per hour, at the default slices (shell: claude 100 s, codex 7 s,
// opencode 100 s; MCP: 600 s on all three):
//   cycle     = median gap between polling requests in the window
//   overhead  = cycle - slice used      (the CLI's own round trip, the ask's start)
//   requests  = 3600 / (default slice + overhead)
//   input     = requests * first + growth * requests * (requests - 1) / 2
// where `first` is the first polling request's input bytes and `growth` how
// much each poll adds to the conversation every later request re-reads.
// Input is counted in bytes of the request body (conversation, system
// prompt and tool definitions as sent); tokens are estimated at 4 bytes each.
// Ending the turn costs one request to end it and one (the resume, with the
// answer) per question, whatever the wait: 0 an hour.
//
// MAGI_BENCH_CLIS, MAGI_BENCH_FORMS, MAGI_BENCH_MODES narrow the cases
// (comma-separated); the compatibility suite runs codex's shell small.
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { type Cli, type Form, type Mode, measureWaitCost, type WaitCost } from "../../test/compat/waitCost.js"
import { BYTES_PER_TOKEN } from "../../test/compat/standins/meter.js"

const list = <A extends string>(name: string, all: ReadonlyArray<A>): ReadonlyArray<A> => {
  const raw = process.env[`MAGI_BENCH_${name}`]
  if (raw === undefined || raw === "") return all
  const picked = raw.split(",").map((s) => s.trim()) as A[]
  for (const p of picked) if (!all.includes(p)) throw new Error(`MAGI_BENCH_${name}: unknown ${p} (one of ${all.join(", ")})`)
  return picked
}
const num = (name: string, fallback: number) => {
  const raw = process.env[`MAGI_BENCH_${name}`]
  return raw === undefined || raw === "" ? fallback : Number(raw)
}

const CLIS = list<Cli>("CLIS", ["claude", "codex", "opencode"])
const FORMS = list<Form>("FORMS", ["shell", "mcp"])
const MODES = list<Mode>("MODES", ["poll", "end-turn"])
const WINDOW_S = num("WINDOW_S", 120)
const SLICE = num("SLICE", 10)
const MAGI = NodePath.resolve(process.env.MAGI_BENCH_BUNDLE ?? "dist/magi.js")

/** Each CLI's slices with nothing configured (src/agents/adapters, src/agents/Slices.ts). */
const DEFAULT_SLICE: Record<Form, Record<Cli, number>> = {
  shell: { claude: 100, codex: 7, opencode: 100 },
  mcp: { claude: 600, codex: 600, opencode: 600 }
}

/** The pinned CLI: from the compat suite's setup when it runs us, else the (cached) install. */
const binOf = async (cli: Cli): Promise<string> => {
  const set = process.env[`MAGI_COMPAT_${cli.toUpperCase()}`]
  if (set !== undefined && set !== "") return set
  const mod = (await import(pathToFileURL(NodePath.resolve("scripts/agents/install.mjs")).href)) as { install: (name: string) => string }
  return mod.install(cli)
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const kb = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} KB`)
const tokens = (bytes: number) => {
  const t = bytes / BYTES_PER_TOKEN
  return t >= 1e6 ? `${(t / 1e6).toFixed(2)} M` : t >= 1e3 ? `${(t / 1e3).toFixed(1)} k` : `${Math.round(t)}`
}

/** The hour, as the header's arithmetic says. */
const perHour = (r: WaitCost) => {
  if (r.mode === "end-turn") return { requests: 0, bytes: 0, cycle: Number.NaN, slice: r.sliceSecs ?? DEFAULT_SLICE[r.form][r.cli] }
  const slice = r.sliceSecs ?? DEFAULT_SLICE[r.form][r.cli]
  const cycle = median(r.gapsMs) / 1000
  const overhead = Math.max(0, cycle - slice)
  const requests = 3600 / (DEFAULT_SLICE[r.form][r.cli] + overhead)
  const first = r.sizes[0] ?? 0
  const growth = r.sizes.length < 2 ? 0 : (r.sizes.at(-1)! - first) / (r.sizes.length - 1)
  const bytes = requests * first + (growth * requests * (requests - 1)) / 2
  return { requests, bytes, cycle, slice, overhead, growth, first }
}

const results: WaitCost[] = []
for (const cli of CLIS) {
  const bin = await binOf(cli)
  for (const form of FORMS)
    for (const mode of MODES) {
      // codex's shell hands back within 10 s: its 7 s default is the short slice already.
      const slice = form === "shell" && cli === "codex" ? undefined : SLICE
      const r = await measureWaitCost({ cli, bin, form, mode, windowMs: WINDOW_S * 1000, magi: MAGI, ...(slice === undefined ? {} : { sliceSecs: slice }) })
      results.push(r)
      const h = perHour(r)
      const head = `${cli.padEnd(8)} ${form.padEnd(5)} ${mode.padEnd(8)}`
      const same = r.turns === 1
        ? "in the waiting turn"
        : r.sessionAfter === r.sessionAsked
        ? "same session resumed"
        : `ANOTHER session (${r.sessionAsked} -> ${r.sessionAfter})`
      const answer = `answer -> model ${(r.answerToModelMs / 1000).toFixed(1)} s (${same}, ${r.status})`
      if (mode === "poll")
        console.log(
          `${head} slice ${h.slice} s: ${r.requests} requests in ${WINDOW_S} s, one per ${h.cycle.toFixed(1)} s (overhead ${h.overhead!.toFixed(1)} s), ` +
            `first ${kb(h.first!)}, +${(h.growth! / 1000).toFixed(2)} KB each; at the ${DEFAULT_SLICE[form][cli]} s default: ` +
            `${Math.round(h.requests)} requests/h, ${kb(h.bytes)} input/h (~${tokens(h.bytes)} tokens/h); ${answer}`
        )
      else
        console.log(
          `${head} slice ${h.slice} s: ${r.requests} request${r.requests === 1 ? "" : "s"} in ${WINDOW_S} s (the one that ended the turn): 0 requests/h; ` +
            `per question 2 requests (end the turn ${kb(r.sizes[0] ?? 0)}, resume with the answer ${kb(r.answerBytes)}); ${answer}`
        )
    }
}
if (results.some((r) => r.status !== "done" || (r.turns > 1 && r.sessionAfter !== r.sessionAsked))) {
  console.error("wait-cost: a case did not end done in its own session")
  process.exitCode = 1
}
