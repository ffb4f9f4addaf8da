// 1,000 idle connections parked on `magi web` (connected, never a byte
// sent), then the owner's requests: does anyone get locked out? Before the
// limits, 1,100 such sockets at `ulimit -n 1024` locked every client out.
// Reports how many parked sockets the server kept open (its cap is 400; the
// oldest idle ones make room), 20 fresh-connection GET /api/health latencies
// while they are parked, and how long until the header deadline (10 s) has
// closed every parked socket.
//
//   node scripts/bench/web-idle.mjs [sockets=1000]
//
// (or MAGI_BENCH_SOCKETS; MAGI_BENCH_CLOSE_WAIT caps the wait for the parked
// sockets to close, 30 s by default.)
import { get } from "node:http"
import { connect } from "node:net"
import { median, ms, size, startWeb, tempDir } from "./lib.mjs"

const SOCKETS = Number(process.argv[2] ?? size("SOCKETS", 1000))
const CLOSE_WAIT = size("CLOSE_WAIT", 30)
const web = await startWeb(tempDir("magi-bench-idle-"))
const sleep = (n) => new Promise((r) => setTimeout(r, n))

const parked = []
let refused = 0
const parkedAt = performance.now()
await Promise.all(
  Array.from({ length: SOCKETS }, () =>
    new Promise((done) => {
      const s = connect(web.port, web.hostname)
      s.on("error", () => (refused++, done()))
      s.resume()
      s.once("connect", () => (parked.push(s), done()))
    }))
)
await sleep(200)
const stillOpen = () => parked.filter((s) => !s.destroyed && s.readyState === "open").length
const openAfterParking = stillOpen()

const health = () =>
  new Promise((done) => {
    const t0 = performance.now()
    get({ host: web.hostname, port: web.port, path: "/api/health", agent: false }, (res) => {
      res.resume()
      res.on("end", () => done({ ok: res.statusCode === 200, ms: performance.now() - t0 }))
    }).on("error", () => done({ ok: false, ms: performance.now() - t0 }))
  })
const answers = []
for (let i = 0; i < 20; i++) answers.push(await health())
const latencies = answers.map((a) => a.ms)

let allClosedAfter = null
for (let i = 0; i < CLOSE_WAIT * 10; i++) {
  if (stillOpen() === 0) {
    allClosedAfter = (performance.now() - parkedAt) / 1000
    break
  }
  await sleep(100)
}
for (const s of parked) s.destroy()
await web.stop()
console.log(
  `${SOCKETS} idle sockets parked (${refused} refused at connect): ${openAfterParking} still open on the server's side; ` +
    `20 GET /api/health meanwhile: ${answers.filter((a) => a.ok).length}/20 ok, median ${ms(median(latencies))}, max ${ms(Math.max(...latencies))}; ` +
    `every parked socket closed ${allClosedAfter === null ? `not within ${CLOSE_WAIT} s` : `after ${allClosedAfter.toFixed(1)} s`}`
)
