// A big diff on the phone (issue 32.2): a run whose branch adds 20,000 lines
// (MAGI_BENCH_DIFF_LINES) over 100 files, its page opened in Chromium at
// 390×844 with the CPU throttled 4× (CDP Emulation.setCPUThrottlingRate).
// Times, on the page's own clock, from the tap on "Diff" to the frame whose
// patch lines reach the bottom of the screen (the first screen), over
// MAGI_BENCH_RUNS loads; and the first page's size on the wire.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
// @ts-expect-error plain JS helper
import { isolatedEnv, launchChromium, median, ms, size, startWeb } from "./lib.mjs"

const LINES: number = size("DIFF_LINES", 20_000)
const RUNS: number = size("RUNS", 5)
const RATE = 4
// 200 lines a file: under the fold, so the first screen is patch lines, not folded files.
const FILES = 100
const { home, top } = isolatedEnv()
const repo = join(top, "repo")
mkdirSync(repo)
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: "pipe" }).trim()
git("init", "-q", "-b", "main")
git("config", "user.email", "b@example.invalid")
git("config", "user.name", "b")
writeFileSync(join(repo, "README.md"), "bench\n")
git("add", ".")
git("commit", "-qm", "base")
const base = git("rev-parse", "HEAD")
git("checkout", "-qb", "magi/d1ff")
const per = Math.ceil(LINES / FILES)
for (let f = 0; f < FILES; f++)
  writeFileSync(join(repo, `file${f}.ts`), Array.from({ length: per }, (_, i) => `export const value${f}_${i} = "${"x".repeat(i % 60)}"\n`).join(""))
git("add", ".")
git("commit", "-qm", "a big change")
git("checkout", "-q", "main")

const id = "20261203-120000-d1ff"
const runDir = join(home, "runs", id)
mkdirSync(join(runDir, "artifacts"), { recursive: true })
const at = new Date().toISOString().replace(/\.\d+Z$/, "Z")
writeFileSync(
  join(runDir, "run.json"),
  JSON.stringify({
    schema: 2,
    id,
    status: "done",
    instruction: "A big change",
    repo,
    base: "main",
    base_commit: base,
    worktree: repo,
    branch: "magi/d1ff",
    seats: [{ key: "impl", agent: "fake", turns: 1, session: null, write: true }],
    created_at: at,
    updated_at: at,
    summary: "",
    reason: ""
  })
)

const web = await startWeb(home)
const browser = await launchChromium()
const firsts: number[] = []
let bytes = 0
try {
  const wire = await fetch(`${web.url}/api/runs/${id}/diff?from=0`)
  bytes = (await wire.arrayBuffer()).byteLength
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    try {
      const page = await context.newPage()
      await page.goto(`${web.url}/#/runs/${id}`)
      const summary = page.locator(".run-detail details.diff > summary")
      await summary.waitFor({ timeout: 60_000 })
      const cdp = await context.newCDPSession(page)
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: RATE })
      // The probe: the first frame after the tap whose patch lines reach the screen's bottom.
      await page.evaluate(() => {
        const w = window as unknown as { __tap?: number; __first?: number }
        const box = document.querySelector(".run-detail details.diff")!
        box.addEventListener("toggle", () => {
          w.__tap = performance.now()
          const frame = () => {
            const lines = box.querySelectorAll(".dl")
            const last = lines[lines.length - 1]
            if (last === undefined || last.getBoundingClientRect().bottom < window.innerHeight) return void requestAnimationFrame(frame)
            w.__first = performance.now()
          }
          requestAnimationFrame(frame)
        }, { once: true })
        box.scrollIntoView()
      })
      await summary.click()
      await page.waitForFunction(() => (window as unknown as { __first?: number }).__first !== undefined, undefined, { timeout: 60_000, polling: 200 })
      const [tap, first] = await page.evaluate(() => {
        const w = window as unknown as { __tap: number; __first: number }
        return [w.__tap, w.__first]
      })
      firsts.push(first - tap)
    } finally {
      await context.close()
    }
  }
} finally {
  await browser.close()
  await web.stop()
}
console.log(
  `diff of ${LINES} lines in ${FILES} files at ${RATE}× CPU, 390×844: first screen after the tap median ${ms(median(firsts))}, max ${
    ms(Math.max(...firsts))
  } (${RUNS} loads); first page ${(bytes / 1024).toFixed(1)} KiB`
)
