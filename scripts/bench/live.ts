// A seat's live output for an hour (issue 32.1), compressed: MAGI_BENCH_EVENTS
// events (36,000: an hour at 10 a second) appended through magi's own live
// log writer (agents/LiveLog.ts, as a turn's stdout feeds it) at
// MAGI_BENCH_RATE a second, while one SSE client and one Chromium page at
// 390×844 follow the seat. Each event carries the time it was appended:
// the client and the page say how long after it they had it. Also the
// server's RSS as it goes, the page's DOM node count, and the log's size.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { mkdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import * as LiveLog from "../../src/agents/LiveLog.js"
// @ts-expect-error plain JS helper
import { isolatedEnv, launchChromium, median, ms, size, sleep, startWeb } from "./lib.mjs"

const EVENTS: number = size("EVENTS", 36_000)
const RATE: number = size("RATE", 200)
const TICK_MS = 50
const { home } = isolatedEnv()
const id = "20261204-120000-11ve"
const artifacts = join(home, "runs", id, "artifacts")
mkdirSync(artifacts, { recursive: true })
const at = new Date().toISOString().replace(/\.\d+Z$/, "Z")
const record = {
  schema: 2,
  id,
  status: "running",
  instruction: "An hour of output",
  repo: home,
  base: "main",
  base_commit: "0".repeat(40),
  worktree: home,
  branch: "magi/11ve",
  seats: [{ key: "impl", agent: "fake", turns: 0, session: null, write: true }],
  created_at: at,
  updated_at: at,
  summary: "",
  reason: ""
}
await import("node:fs").then((fs) => fs.writeFileSync(join(home, "runs", id, "run.json"), JSON.stringify(record)))

const run = <A>(e: Effect.Effect<A, never, import("@effect/platform/FileSystem").FileSystem>) => Effect.runPromise(Effect.provide(e, NodeContext.layer))
const writer = await run(LiveLog.open(LiveLog.liveFile(artifacts, "impl"), 1))
const encoder = new TextEncoder()

const pctl = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN
}
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024

const web = await startWeb(home)
const browser = await launchChromium()
const sse: number[] = []
let sseCount = 0
const rss: number[] = []
const dom: number[] = []
const ac = new AbortController()
try {
  // The SSE client: every event's latency from its append.
  const res = await fetch(`${web.url}/api/runs/${id}/live?seat=impl`, { signal: ac.signal })
  const reading = (async () => {
    const reader = res.body!.getReader()
    let rest = ""
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      rest += new TextDecoder().decode(value)
      const now = Date.now()
      let cut: number
      while ((cut = rest.indexOf("\n\n")) >= 0) {
        const frame = rest.slice(0, cut)
        rest = rest.slice(cut + 2)
        const t = / t=(\d+)/.exec(frame)
        if (t !== null) {
          sse.push(now - Number(t[1]))
          sseCount++
        }
      }
    }
  })()

  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
  const page = await context.newPage()
  await page.goto(`${web.url}/#/runs/${id}`)
  await page.locator(".run-detail section.live").waitFor({ timeout: 60_000 })
  await page.evaluate(() => {
    const w = window as unknown as { __lat: number[] }
    w.__lat = []
    new MutationObserver((records) => {
      const now = Date.now()
      for (const r of records)
        for (const n of r.addedNodes) {
          const t = / t=(\d+)/.exec(n.textContent ?? "")
          if (t !== null) w.__lat.push(now - Number(t[1]))
        }
    }).observe(document.body, { childList: true, subtree: true })
  })

  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000))
  const started = Date.now()
  let sent = 0
  while (sent < EVENTS) {
    const n = Math.min(perTick, EVENTS - sent)
    const now = Date.now()
    const lines = Array.from({ length: n }, (_, i) => `step ${sent + i} of the hour t=${now}\n`).join("")
    await run(writer.feed(encoder.encode(lines)))
    sent += n
    if ((sent / perTick) % 20 === 0) {
      rss.push(rssMb(web.pid))
      dom.push(await page.evaluate(() => document.getElementsByTagName("*").length))
    }
    const next = started + (sent / RATE) * 1000
    await sleep(Math.max(0, next - Date.now()))
  }
  await run(writer.end("", false))
  const deadline = Date.now() + 30_000
  while (sseCount < EVENTS && Date.now() < deadline) await sleep(50)
  await sleep(500)
  rss.push(rssMb(web.pid))
  dom.push(await page.evaluate(() => document.getElementsByTagName("*").length))
  const pageLat = await page.evaluate(() => (window as unknown as { __lat: number[] }).__lat)
  const lis = await page.evaluate(() => document.querySelectorAll(".live-events li").length)
  const took = (Date.now() - started) / 1000
  ac.abort()
  await reading.catch(() => {})
  // Off the run's page first: its event stream closes before the browser does.
  await page.goto("about:blank")
  await context.close()
  const log = statSync(LiveLog.liveFile(artifacts, "impl")).size
  console.log(`live: ${EVENTS} events (${(EVENTS / 36_000).toFixed(2)} h at 10/s) appended at ${RATE}/s over ${took.toFixed(1)} s`)
  console.log(
    `live: append -> SSE client: median ${ms(median(sse))}, p99 ${ms(pctl(sse, 99))}, max ${ms(Math.max(...sse))} (${sseCount}/${EVENTS} received)`
  )
  console.log(
    `live: append -> page at 390×844: median ${ms(median(pageLat))}, p99 ${ms(pctl(pageLat, 99))}, max ${ms(Math.max(...pageLat))} (${pageLat.length} shown)`
  )
  console.log(
    `live: server RSS first ${rss[0]!.toFixed(1)} MB, last ${rss.at(-1)!.toFixed(1)} MB, max ${Math.max(...rss).toFixed(1)} MB; page DOM nodes max ${
      Math.max(...dom)
    } (${lis} lines kept); log ${(log / 1024).toFixed(0)} KiB`
  )
} finally {
  ac.abort()
  await browser.close()
  await web.stop()
}
