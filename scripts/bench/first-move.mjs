// The first move of a home written before month shelves (an upgrade), done
// by the first command that lists (`magi answer --list`): its wall time and
// peak RSS, then the same listing again on the moved home. Then the same
// move done by `magi serve` on a second flat home: its peak RSS, what it
// still holds once the move is done, and what a `magi serve` started on the
// moved home holds (issue 20: 470 MB against 126 MB at 100,000). Goal: the
// move under 256 MB RSS at 100,000 settled questions, and the same at
// 1,000,000; the listing after it reads only the hot folder.
//
//   node scripts/bench/first-move.mjs [settled=100000]
//
// (or MAGI_BENCH_SETTLED; 100 open questions beside them. MAGI_BENCH_SERVE=0
// leaves out the `magi serve` half, MAGI_BENCH_LIST=0 the `magi answer
// --list` half; MAGI_BENCH_SERVE_SETTLE, 10 s by default, is how long a serve
// runs idle before its RSS is read.)
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { MAGI, isolatedEnv, ms, size, track } from "./lib.mjs"
import { questionRecord } from "./questions.mjs"

const SETTLED = Number(process.argv[2] ?? size("SETTLED", 100_000))
const OPEN = 100
const SERVE = size("SERVE", 1) !== 0
const LIST = size("LIST", 1) !== 0
const SETTLE_SECONDS = size("SERVE_SETTLE", 10)
const sleep = (n) => new Promise((r) => setTimeout(r, n))

/** A flat home of SETTLED settled and OPEN open questions, none on a shelf: its isolated environment. */
const flatHome = () => {
  const isolated = isolatedEnv()
  const hot = join(isolated.home, "questions")
  mkdirSync(hot, { recursive: true })
  const t0 = performance.now()
  const start = new Date(2026, 0, 1, 8).getTime()
  // Spread over ten months, every id in its month.
  const step = Math.floor((300 * 24 * 3600 * 1000) / Math.max(1, SETTLED))
  for (let i = 0; i < SETTLED; i++) {
    const q = questionRecord(new Date(start + i * step), i)
    writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
  }
  for (let i = 0; i < OPEN; i++) {
    const q = questionRecord(new Date(2026, 10, 20, 9, 0, i), SETTLED + i, { open: true })
    writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
  }
  console.log(`seeded ${SETTLED} settled and ${OPEN} open questions in a flat home in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  return { ...isolated, hot }
}

/** The process's resident set now and its high-water mark, in MiB (0 once it has exited). */
const memoryOf = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0)
    return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 }
  } catch {
    return { rss: 0, peak: 0 }
  }
}

/** `magi answer --list` on the home: wall time and the process's peak RSS (VmHWM, read until it exits). */
const listing = (isolated) =>
  new Promise((done, fail) => {
    const began = performance.now()
    const child = track(spawn(process.execPath, [MAGI, "answer", "--list"], { env: isolated.env, stdio: ["ignore", "ignore", "pipe"] }))
    let peak = 0
    let stderr = ""
    child.stderr.on("data", (c) => (stderr += c))
    const look = () => (peak = Math.max(peak, memoryOf(child.pid).peak))
    const timer = setInterval(look, 20)
    child.once("exit", (code) => {
      clearInterval(timer)
      if (code !== 0) fail(new Error(`magi answer --list exited ${code}: ${stderr}`))
      else done({ ms: performance.now() - began, peak, stderr })
    })
  })

if (LIST) {
  const isolated = flatHome()
  const first = await listing(isolated)
  const second = await listing(isolated)
  const goal = first.peak < 256 ? "met" : "NOT met"
  console.log(
    `first magi answer --list (the move of ${SETTLED} included): ${(first.ms / 1000).toFixed(1)} s, peak RSS ${
      first.peak.toFixed(0)
    } MiB (goal under 256 MB ${goal})`
  )
  console.log(`magi answer --list after the move: ${ms(second.ms)}, peak RSS ${second.peak.toFixed(0)} MiB`)
}

if (SERVE) {
  const flat = flatHome()
  /** `magi serve` on `flat`'s home: { pid, alive, moved, stop }, stop resolving once it has exited. */
  const serve = () => {
    const child = track(spawn(process.execPath, [MAGI, "serve", "--home", flat.home], { env: flat.env, cwd: flat.cwd, stdio: ["ignore", "ignore", "pipe"] }))
    let stderr = ""
    // The serve says on stderr when its first move is done (before its banner).
    let moved = false
    child.stderr.on("data", (c) => {
      stderr += c
      moved ||= /moved \d+ settled questions/.test(stderr)
    })
    const exited = new Promise((done) => child.once("exit", done))
    child.once("exit", (code, signal) => {
      // 143: the SIGTERM this bench sends, said as an exit code.
      if (signal === null && code !== 0 && code !== 143) console.error(`magi serve exited ${code}: ${stderr}`)
    })
    return {
      pid: child.pid,
      alive: () => child.exitCode === null && child.signalCode === null,
      moved: () => moved,
      stop: () => (child.kill("SIGTERM"), exited)
    }
  }
  const hotCount = () => readdirSync(flat.hot).filter((n) => n.endsWith(".json")).length
  const began = performance.now()
  const mover = serve()
  let peak = 0
  // Watched by what the serve says, not by listing the hot folder: a listing
  // of 1,000,000 names five times a second took the mover's CPU.
  while (!mover.moved()) {
    if (!mover.alive()) throw new Error("magi serve exited before the move was done")
    if (performance.now() - began > 3_600_000) throw new Error("the move by magi serve did not end within an hour")
    peak = Math.max(peak, memoryOf(mover.pid).peak)
    await sleep(200)
  }
  const moveSeconds = (performance.now() - began) / 1000
  if (hotCount() !== OPEN) throw new Error(`magi serve said the move was done with ${hotCount()} questions still hot, not ${OPEN}`)
  await sleep(SETTLE_SECONDS * 1000)
  const after = memoryOf(mover.pid)
  await mover.stop()
  const fresh = serve()
  await sleep(SETTLE_SECONDS * 1000)
  const freshMemory = memoryOf(fresh.pid)
  await fresh.stop()
  console.log(
    `magi serve on a flat home of ${SETTLED}: the move took ${moveSeconds.toFixed(1)} s, peak RSS ${Math.max(peak, after.peak).toFixed(0)} MiB; ` +
      `${SETTLE_SECONDS} s after it, RSS ${after.rss.toFixed(0)} MiB; a magi serve started on the moved home: RSS ${
        freshMemory.rss.toFixed(0)
      } MiB after ${SETTLE_SECONDS} s`
  )
}
