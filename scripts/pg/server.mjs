// A throwaway PostgreSQL server for the tests and the benches: `initdb` into a
// temporary folder, `pg_ctl start` on a free port bound to 127.0.0.1, stopped
// and removed by `stop()`. Nothing listens beyond loopback, and there is no
// Unix socket (`unix_socket_directories = ''`), so two runs never collide on
// `/var/run/postgresql`.
//
// As root, PostgreSQL refuses to run, so `initdb` and `pg_ctl` run as the
// `postgres` user (Debian's package makes it) with the folder owned by it.
import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Where Debian's `postgresql` package puts the server binaries; `MAGI_PG_BIN` names another. */
export const binDir = () => {
  if (process.env.MAGI_PG_BIN) return process.env.MAGI_PG_BIN
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  // The newest major version installed (15 on Debian 12).
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
  for (const v of versions) if (existsSync(join(root, v, "bin", "pg_ctl"))) return join(root, v, "bin")
  return undefined
}

const freePort = () =>
  new Promise((done, fail) => {
    const probe = createServer()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address()
      probe.close(() => done(port))
    })
  })

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** Run a server binary, as `postgres` when we are root; throws with its output on failure. */
const runAs = (bin, args) => {
  const file = join(binDir(), bin)
  const result = isRoot()
    ? spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", [file, ...args].map(quote).join(" ")], { encoding: "utf8" })
    : spawnSync(file, args, { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${bin} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`)
  return result.stdout
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`

/**
 * Start a server; resolves to `{ url, port, dir, stop }`, where `url` is a
 * `postgres://` URL of the `postgres` database as superuser `magi_test`
 * (password `magi_test`, so a test can see that errors never print it).
 */
export const startServer = async () => {
  const bin = binDir()
  if (bin === undefined)
    throw new Error("PostgreSQL is not installed: `apt-get install -y postgresql` (or set MAGI_PG_BIN to the folder holding pg_ctl)")
  const dir = mkdtempSync(join(tmpdir(), "magi-pg-"))
  // The temp folder is 0700 and root's: postgres must be able to reach it.
  chmodSync(dir, 0o755)
  const data = join(dir, "data")
  const pwfile = join(dir, "pw")
  writeFileSync(pwfile, "magi_test\n")
  if (isRoot()) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
    chownSync(pwfile, uid, gid)
  }
  // fsync stays on: "every acknowledged write is durable" is part of what the
  // tests and benches measure, not something to switch off for speed.
  runAs("initdb", ["-D", data, "-U", "magi_test", "--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8", "--no-instructions"])
  const port = await freePort()
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
    // Each test file gets a database and a pool; the suite runs two files at once.
    "-c max_connections=200",
    "-c shared_buffers=64MB"
  ].join(" ")
  runAs("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "120", "start"])
  let stopped = false
  /** Stop the server but keep its data, as a database restart or outage would. */
  const pause = () => runAs("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
  /** Start it again on the same port and data. */
  const resume = () => runAs("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "120", "start"])
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      runAs("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
    } catch {
      // Already gone: nothing to stop.
    }
    rmSync(dir, { recursive: true, force: true })
  }
  return { url: `postgres://magi_test:magi_test@127.0.0.1:${port}/postgres`, port, dir, stop, pause, resume }
}

/** The same server's URL for another database. */
export const databaseUrl = (serverUrl, database) => {
  const u = new URL(serverUrl)
  u.pathname = `/${database}`
  return u.toString()
}
