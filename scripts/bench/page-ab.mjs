// Two builds of the page, one home, loads alternated (A B B A A B …) so the
// machine's drift falls on both alike: the way to tell whether a change to
// the page made its first screen faster, on a 2-core machine whose single
// figures move by a few hundred milliseconds from one minute to the next.
//
//   A=/path/to/old/dist/magi.js B=dist/magi.js MAGI_BENCH_HOME=<a home> node scripts/bench/page-ab.mjs
//
// (A home: one `scripts/bench/history.mjs` built, printed by it; MAGI_BENCH_PAGE_RUNS loads each, 20 by default.)
import { join } from "node:path"
import { spawn } from "node:child_process"
import { launchChromium, loadPage, median, ms, track } from "./lib.mjs"

const home = process.env.MAGI_BENCH_HOME
const RUNS = Number(process.env.MAGI_BENCH_PAGE_RUNS ?? 20)
/** MAGI_BENCH_ALL_CARDS=1 also waits for all 100 open cards (slower; the first screen is the point). */
const ALL_CARDS = process.env.MAGI_BENCH_ALL_CARDS === "1"
if (home === undefined || process.env.A === undefined || process.env.B === undefined) {
  console.error("usage: A=<magi.js> B=<magi.js> MAGI_BENCH_HOME=<home> node scripts/bench/page-ab.mjs")
  process.exit(2)
}

/** `magi web --no-loop` from the build `bundle` on the shared home: { url, stop }. */
const serve = (bundle) =>
  new Promise((done, fail) => {
    const server = track(
      spawn(process.execPath, [bundle, "web", "--bind", "127.0.0.1", "--port", "0", "--home", home, "--no-loop"], {
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: join(home, "config") }
      })
    )
    const exited = new Promise((r) => server.once("exit", r))
    let out = ""
    server.stdout.on("data", (d) => {
      out += d
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (m) done({ url: m[1], stop: () => (server.kill("SIGTERM"), exited) })
    })
    server.once("exit", (code) => fail(new Error(`magi web (${bundle}) exited with ${code}`)))
  })

const builds = { A: await serve(process.env.A), B: await serve(process.env.B) }
// Past each server's start (its shelf pass) and first reads, so neither load pays them.
await new Promise((r) => setTimeout(r, 4000))
for (const { url } of Object.values(builds))
  for (const path of ["/", "/app.js", "/api/questions", "/api/notices"]) await fetch(url + path).then((r) => r.arrayBuffer())

const browser = await launchChromium()
const loads = { A: [], B: [] }
try {
  for (let i = 0; i < RUNS * 2; i++) {
    const which = ["A", "B", "B", "A"][i % 4]
    loads[which].push(await loadPage(browser, builds[which].url, { cards: ALL_CARDS ? 100 : 0 }))
  }
} finally {
  await browser.close()
  await Promise.all(Object.values(builds).map(({ stop }) => stop()))
}
for (const which of ["A", "B"]) {
  const of = (key) => median(loads[which].map((r) => r[key]))
  console.log(
    `${which}: first screen drawn ${ms(of("drawn"))}, interactive ${ms(of("responding"))} (runs ${
      loads[which].map((r) => r.responding.toFixed(0)).join(", ")
    })` +
      (ALL_CARDS ? `, all cards ${ms(of("allCards"))}` : "")
  )
}
