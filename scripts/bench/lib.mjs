// Shared bits for the benchmarks: an isolated magi home, process helpers,
// and the clean-up every bench gets whichever way it ends.
import { spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

// MAGI_BENCH_BUNDLE runs another build (e.g. the one before a change) under the same load, for a before/after.
export const MAGI = resolve(process.env.MAGI_BENCH_BUNDLE ?? "dist/magi.js")

/**
 * `MAGI_BENCH_<NAME>` as a number, else `fallback`: each bench's size, so the
 * test suite can run every one of them small (test/bench/benches.test.ts).
 */
export const size = (name, fallback) => {
  const raw = process.env[`MAGI_BENCH_${name}`]
  return raw === undefined || raw === "" ? fallback : Number(raw)
}

// -- clean-up ---------------------------------------------------------------------
//
// A bench that throws half-way used to leave its `magi web` listening and its
// temp folders behind. Whatever it started is recorded here and undone when
// the process exits, however it exits: normally, on an uncaught error, or on
// Ctrl-C / SIGTERM. The exit handler can only run synchronous code, so
// children get SIGKILL there (a bench that finishes stops them properly
// first) and folders go with rmSync, after the children that write to them.

const children = new Set()
const folders = new Set()
const atExit = new Set()

/**
 * Stop `child` (and, with `group`, every process in its process group: spawn
 * it `detached` for that) if it is still running when this process exits.
 */
export const track = (child, { group = false } = {}) => {
  const entry = { child, group }
  children.add(entry)
  child.once("exit", () => children.delete(entry))
  return child
}

/** Remove `dir` when this process exits, unless MAGI_BENCH_KEEP=1 (to measure a home again later). */
export const removeAtExit = (dir) => {
  if (process.env.MAGI_BENCH_KEEP !== "1") folders.add(dir)
  return dir
}

/** Run `f` (synchronous) when this process exits: a server to stop, say. */
export const onExit = (f) => atExit.add(f)

/** A fresh folder under the temp dir, removed at exit. */
export const tempDir = (prefix) => removeAtExit(mkdtempSync(join(tmpdir(), prefix)))

process.once("exit", () => {
  for (const { child, group } of children) {
    try {
      if (group) process.kill(-child.pid, "SIGKILL")
      else child.kill("SIGKILL")
    } catch {
      // Gone already.
    }
  }
  for (const f of atExit) {
    try {
      f()
    } catch {
      // Best effort: the next clean-up still runs.
    }
  }
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})
// Signals end the process without "exit" unless handled: turn them into an
// exit. Kept handled (`on`, not `once`): `timeout` signals the child and then
// its whole group, and a second SIGTERM unhandled would kill the process
// half-way through the clean-up the first one started.
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]]) process.on(signal, () => process.exit(code))

export const isolatedEnv = () => {
  const top = tempDir("magi-bench-")
  mkdirSync(join(top, "work"))
  return {
    top,
    cwd: join(top, "work"),
    home: join(top, "home"),
    env: { PATH: process.env.PATH, HOME: top, MAGI_HOME: join(top, "home"), XDG_CONFIG_HOME: join(top, "config") }
  }
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export const run = (cmd, args, opts = {}) =>
  new Promise((done) => {
    const child = track(spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts }))
    let out = ""
    child.stdout.on("data", (c) => (out += c))
    child.on("close", (code) => done({ code, out }))
  })

export const ms = (n) => `${n.toFixed(1)} ms`

/**
 * `magi web --no-loop` on `home`, 127.0.0.1, a free port, started in `cwd`
 * (the repository `/api/repos` names): { url, hostname, port, pid, stop }.
 * `stop` resolves once the server has exited.
 */
export const startWeb = async (home, { cwd } = {}) => {
  const argv = [process.execPath, MAGI, "web", "--bind", "127.0.0.1", "--port", "0", "--home", home, "--no-loop"]
  // MAGI_BENCH_NOFILE runs the server under `ulimit -n N` (1024 is the usual default).
  const limit = process.env.MAGI_BENCH_NOFILE
  const server = track(
    spawn(limit ? "/bin/sh" : argv[0], limit ? ["-c", `ulimit -n ${Number(limit)} && exec "$@"`, "sh", ...argv] : argv.slice(1), {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: join(home, "config") },
      ...(cwd === undefined ? {} : { cwd })
    })
  )
  const url = await new Promise((done, fail) => {
    let out = ""
    server.stdout.on("data", (d) => {
      out += d
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (m) done(m[1])
    })
    server.once("exit", (code) => fail(new Error(`magi web exited with ${code}`)))
  })
  const { hostname, port } = new URL(url)
  const exited = new Promise((done) => server.once("exit", done))
  const stop = () => (server.exitCode === null && server.signalCode === null && server.kill("SIGTERM"), exited)
  return { url, hostname, port: Number(port), pid: server.pid, stop }
}

const percentileOf = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

/**
 * `connections` keep-alive clients on GET `path` for `seconds`: requests/s,
 * p50, p99, max, errors, mean body size. Every client makes at least one
 * request, however short `seconds` (a warm-up of one request on a loaded
 * machine used to make none, and the figures then had nothing to read).
 */
export const loadTest = async ({ hostname, port }, path, { seconds = 10, connections = 20, headers = {} } = {}) => {
  const { Agent, request } = await import("node:http")
  const now = () => performance.timeOrigin + performance.now()
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const latencies = []
  let errors = 0
  let bytes = 0
  const one = () =>
    new Promise((done) => {
      const started = now()
      const req = request({ hostname, port, path, agent, headers }, (res) => {
        res.on("data", (c) => (bytes += c.length))
        res.on("end", () => {
          latencies.push(now() - started)
          if (res.statusCode !== 200) errors++
          done()
        })
        res.on("error", () => (errors++, done()))
      })
      req.on("error", () => (errors++, done()))
      req.end()
    })
  const started = now()
  const deadline = started + seconds * 1000
  await Promise.all(Array.from({ length: connections }, async () => {
    do await one()
    while (now() < deadline)
  }))
  const elapsed = (now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    path,
    requests: latencies.length,
    rps: Math.round(latencies.length / elapsed),
    p50: +percentileOf(latencies, 50).toFixed(1),
    p99: +percentileOf(latencies, 99).toFixed(1),
    max: +latencies.at(-1).toFixed(1),
    errors,
    bodyKiB: Math.round(bytes / latencies.length / 1024)
  }
}

export const CHROMIUM = "/usr/bin/chromium"

/** Chromium as the page benchmarks drive it (`launch().close()` when done). */
export const launchChromium = async () => {
  const { chromium } = await import("playwright-core")
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] })
}

/**
 * One cold load of magi's page at `url` in a fresh phone-sized context
 * (390×844, touch) with the CPU throttled `rate`×, on the page's own clock
 * (ms from navigation): `drawn`, the first frame whose open cards reach the
 * bottom of the screen; `responding`, when a task after the next frame runs
 * (a tap's handler would); `allCards`, when `cards` open cards are built
 * (not waited for when `cards` is 0);
 * `nodes`, the DOM's size then.
 *
 * The probe runs inside the page, once per frame in requestAnimationFrame
 * (the layout it reads is the one the frame makes anyway), and is read over
 * CDP every 100 ms. Playwright's own waitForFunction injects a script of its
 * own and polls it, which cost the throttled page ~100 ms and moved every
 * figure it measured.
 */
export const loadPage = async (browser, url, { rate = 4, cards = 100 } = {}) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
  try {
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send("Emulation.setCPUThrottlingRate", { rate })
    await context.addInitScript(() => {
      const firstScreen = () => {
        const open = document.querySelectorAll("section.open-questions article.card")
        const last = open[open.length - 1]
        if (last === undefined || last.getBoundingClientRect().bottom < window.innerHeight) return requestAnimationFrame(firstScreen)
        window.__magiDrawn = performance.now()
        requestAnimationFrame(() => setTimeout(() => (window.__magiResponding = performance.now()), 0))
      }
      requestAnimationFrame(firstScreen)
    })
    const read = async (expression) => (await cdp.send("Runtime.evaluate", { expression, returnByValue: true })).result.value
    const until = async (expression) => {
      for (;;) {
        const value = await read(expression)
        if (value !== undefined && value !== null && value !== false) return value
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    await page.goto(url, { waitUntil: "commit" })
    const responding = await until("window.__magiResponding")
    const drawn = await read("window.__magiDrawn")
    const allCards = cards === 0 ? NaN : await until(`document.querySelectorAll("section.open-questions article.card").length >= ${cards} && performance.now()`)
    const nodes = await read(`document.getElementsByTagName("*").length`)
    return { drawn, responding, allCards, nodes }
  } finally {
    await context.close()
  }
}

export const sleep = (n) => new Promise((r) => setTimeout(r, n))

/**
 * Resolve once `ok()` (which may be async) holds, checking every `every` ms;
 * throw naming `what` after `limit` ms. A latency bench checks often (5 ms,
 * the default) so that the wait adds little to what it measures; one whose
 * check queries the database checks less often, not to load what it measures.
 */
export const until = async (what, ok, { limit = 60_000, every = 5 } = {}) => {
  for (const end = Date.now() + limit; Date.now() < end; await sleep(every)) if (await ok()) return
  throw new Error(`timed out waiting for ${what}`)
}

// -- hosts on one PostgreSQL store ------------------------------------------------
//
// The benches of several hosts (hosts.mjs, queue-hosts.mjs) start a server of
// their own on 127.0.0.1 (scripts/pg/server.mjs), and hosts on it: each a home
// and a config folder whose config.toml names it, as on a machine of its own.

/**
 * A PostgreSQL server for this bench, stopped however the bench exits:
 * `database(name)` creates a database and gives its URL; `stop()` ends what
 * `startMagi` started (each in order first, so claims are released) and the
 * server.
 */
export const benchPostgres = async () => {
  const { default: Pg } = await import("pg")
  const { startServer, databaseUrl } = await import("../pg/server.mjs")
  const server = await startServer()
  onExit(() => server.stop())
  const admin = new Pg.Client({ connectionString: server.url })
  await admin.connect()
  return {
    database: async (name) => {
      await admin.query(`CREATE DATABASE ${name}`)
      return databaseUrl(server.url, name)
    },
    /**
     * Log every statement from now on (`log_statement = all`), for counting
     * what a path costs; returns a function copying the server's log to a
     * file (the server's folder goes when it stops).
     */
    logStatements: async () => {
      await admin.query("ALTER SYSTEM SET log_statement = 'all'")
      await admin.query("SELECT pg_reload_conf()")
      return (to) => copyFileSync(join(server.dir, "server.log"), to)
    },
    /** A line in the server's log (with `logStatements`): marks where a phase of the bench starts. */
    mark: (label) => admin.query(`SELECT ${"$"}1::text AS bench_mark`, [label]),
    stop: async () => {
      await stopMagis()
      await admin.end().catch(() => {})
      server.stop()
    }
  }
}

/**
 * Host `name` on the store at `storeUrl`: an isolated home (`isolatedEnv`)
 * whose config.toml says `[host] name` and then `config`, a function of the
 * host's folder when it names a path in it (a clone there, say).
 */
export const benchHost = (name, storeUrl, config = "") => {
  const o = isolatedEnv()
  mkdirSync(join(o.top, "config", "magi"), { recursive: true })
  writeFileSync(join(o.top, "config", "magi", "config.toml"), `[host]\nname = "${name}"\n${typeof config === "function" ? config(o.top) : config}`)
  return { ...o, name, env: { ...o.env, MAGI_STORE_URL: storeUrl } }
}

/** What `startMagi` started and has not closed yet: what `stopMagis` ends. */
const magis = new Set()

/**
 * `magi ARGS` in `cwd` with exactly `env`, left running: { child, out, err, stop }; `stop` resolves once it has closed.
 * `nodeArgs` go to node itself (`--cpu-prof`, which NODE_OPTIONS refuses).
 */
export const startMagi = (env, args, cwd, nodeArgs = []) => {
  const child = track(spawn(process.execPath, [...nodeArgs, MAGI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] }))
  let out = ""
  let err = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (err += d))
  magis.add(child)
  const closed = new Promise((done) => child.on("close", done))
  child.on("close", () => magis.delete(child))
  return { child, out: () => out, err: () => err, stop: () => (child.kill("SIGTERM"), closed) }
}

/** The address a started `magi web` prints once it listens. */
export const pageOf = async (web, what) => {
  await until(what, () => /^http:\/\/\S+/m.test(web.out()))
  return /^(http:\/\/\S+)/m.exec(web.out())[1]
}

/** End whatever `startMagi` started that still runs: SIGTERM, so each stops in order, then SIGKILL for any still there 1.5 s later. */
export const stopMagis = async () => {
  if (magis.size === 0) return
  for (const c of magis) c.kill("SIGTERM")
  await sleep(1500)
  for (const c of magis) c.kill("SIGKILL")
}
