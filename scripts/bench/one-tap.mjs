// One tap: a `magi ask` publishes to ntfy (a stand-in on 127.0.0.1 that
// records it), the bench presses its first button the way the ntfy app
// does (the action's POST, headers and body as published), and the waiting
// `magi ask` prints the answer. 20 rounds (MAGI_BENCH_ROUNDS); medians of
// "ask started → notification published" and "button pressed → ask
// prints", the second being what the owner waits for after the tap.
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { createServer, request } from "node:http"
import { join } from "node:path"
import { MAGI, isolatedEnv, median, ms, onExit, size, startWeb, track } from "./lib.mjs"

const ROUNDS = size("ROUNDS", 20)

// The stand-in ntfy: every publication handed to whoever waits for the next.
let next = () => {}
const ntfy = createServer((req, res) => {
  let body = ""
  req.on("data", (c) => (body += c))
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
    next({ at: performance.now(), message: JSON.parse(body) })
  })
})
await new Promise((r) => ntfy.listen(0, "127.0.0.1", r))
onExit(() => ntfy.close())
const published = () => new Promise((resolve) => (next = resolve))

const { cwd, env, home } = isolatedEnv()
const web = await startWeb(home, { cwd })
mkdirSync(join(env.XDG_CONFIG_HOME, "magi"), { recursive: true })
writeFileSync(
  join(env.XDG_CONFIG_HOME, "magi", "config.toml"),
  `[notify]\nntfy = { server = "http://127.0.0.1:${ntfy.address().port}", topic = "bench" }\n[web]\npublic_url = "${web.url}"\n`
)

/** POST as the ntfy app does an `http` action. */
const press = (action) =>
  new Promise((resolve, reject) => {
    const req = request(action.url, { method: action.method, headers: action.headers }, (res) => {
      res.resume()
      res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`the press got ${res.statusCode}`))))
    })
    req.on("error", reject)
    req.end(action.body)
  })

const toPublish = []
const toPrint = []
for (let i = 0; i < ROUNDS; i++) {
  const arrival = published()
  const t0 = performance.now()
  const ask = track(
    spawn(process.execPath, [MAGI, "ask", "--summary", `bench ${i}`, "--choice", "yes", "--choice", "no"], { cwd, env, stdio: ["ignore", "pipe", "ignore"] })
  )
  const printed = new Promise((resolve) => ask.stdout.once("data", () => resolve(performance.now())))
  const { at, message } = await arrival
  toPublish.push(at - t0)
  const pressedAt = performance.now()
  await press(message.actions[0])
  toPrint.push((await printed) - pressedAt)
  await new Promise((r) => ask.on("close", r))
}
await web.stop()
ntfy.close()
console.log(
  `one tap over ${ROUNDS} rounds: magi ask started → notification published median ${ms(median(toPublish))}; ` +
    `button pressed → magi ask prints median ${ms(median(toPrint))}, max ${ms(Math.max(...toPrint))}`
)
