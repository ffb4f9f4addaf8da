/**
 * A word to a seat from the phone (issue 32, item 3): the run page's box on
 * a 390 px Chromium against the built `magi web`, and its API's guards.
 */
import { describe, expect, it } from "vitest"
import type { Page } from "playwright-core"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { eventually, postJson, request, seedRun, startWeb } from "./web-support.js"
import { PHONE, phoneSession } from "./browser-support.js"

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5f8c1c50000000049454e44ae426082",
  "hex"
)

/** A POST that declares `length` bytes and sends only `start`: what the server answers, raw. */
const rawPost = (base: string, path: string, length: number, start: Buffer) =>
  new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const socket = NodeNet.connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n\r\n`
      )
      socket.write(start)
    })
    let got = ""
    socket.on("data", (d) => {
      got += d.toString("utf8")
      if (got.includes("}")) {
        socket.destroy()
        resolve(got)
      }
    })
    socket.on("error", reject)
    socket.on("close", () => resolve(got))
  })

const runOnDisk = (home: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id, "run.json"), "utf8"))

describe("the run page's box for a word to a seat", () => {
  const session = phoneSession()
  let page: Page

  it("sends words, shows them queued, edits and cancels them, all within a 390 px screen", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    const run = sampleRun("20261204-101500-5c5c", { status: "running" })
    seedRun(home, run)
    const visit = await session.open(() => startWeb(home))
    page = visit.page
    try {
      await page.goto(`${visit.web.url}/#/runs/${run.id}`)
      await page.getByLabel("Say to the seat").fill("please also cover timeouts")
      await page.getByRole("button", { name: "Send" }).tap({ timeout: 10_000 })
      await page.getByText("word 1 to seat impl of run 5c5c: seat impl's turn is running; it is queued, and given to the seat when that turn ends")
        .waitFor({ timeout: 20_000 })
      expect(runOnDisk(home, run.id).said).toMatchObject([{ n: 1, seat: "impl", text: "please also cover timeouts", state: "queued" }])
      const item = page.locator('.seat-say li.said[data-n="1"]')
      await item.getByText("queued: given to the seat when its turn ends").waitFor({ timeout: 10_000 })

      // The words are shown as text, never as markup.
      await page.getByLabel("Say to the seat").fill("<img src=x onerror=alert(1)> and more")
      await page.getByRole("button", { name: "Send" }).tap()
      const second = page.locator('.seat-say li.said[data-n="2"]')
      await second.locator(".said-text", { hasText: "<img src=x onerror=alert(1)> and more" }).waitFor({ timeout: 10_000 })
      expect(await page.locator(".seat-say img").count()).toBe(0)

      await item.getByRole("button", { name: "Edit" }).tap()
      await item.getByLabel("New words for word 1").fill("please also cover the retries' timeouts")
      await item.getByRole("button", { name: "Save" }).tap()
      await eventually(
        "the edit on disk",
        () => (runOnDisk(home, run.id).said[0].text === "please also cover the retries' timeouts" ? true : undefined),
        10_000
      )
      await page.locator('.seat-say li.said[data-n="1"] .said-text', { hasText: "please also cover the retries' timeouts" }).waitFor({ timeout: 10_000 })

      await page.locator('.seat-say li.said[data-n="2"]').getByRole("button", { name: "Cancel" }).tap()
      await eventually("the cancel on disk", () => (runOnDisk(home, run.id).said[1].state === "cancelled" ? true : undefined), 10_000)
      await page.locator('.seat-say li.said[data-n="2"]').getByText("cancelled").waitFor({ timeout: 10_000 })

      // Nothing on the page is wider than the phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width)

      // Empty words are refused with the reason, and nothing is written.
      await page.getByLabel("Say to the seat").fill("   ")
      await page.getByRole("button", { name: "Send" }).tap()
      await page.getByText("Not sent: the words are empty").waitFor({ timeout: 10_000 })
      expect(runOnDisk(home, run.id).said).toHaveLength(2)
    } finally {
      await session.close()
    }
  })

  it("keeps the cross-site guard and says why a word is refused", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const run = sampleRun("20261204-101600-5d5d", { status: "stopped" })
    seedRun(home, run)
    const web = await startWeb(home)
    try {
      const url = `${web.url}/api/runs/${run.id}/say`
      expect((await postJson(url, { text: "hi" }, { "sec-fetch-site": "cross-site" })).status).toBe(403)
      const form = await request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "text=hi" })
      expect(form.status).toBe(403)
      const badSeat = await postJson(url, { text: "hi", seat: "../../x" })
      expect(badSeat.status).toBe(409)
      expect(badSeat.json().error).toBe('run 5d5d has no seat "../../x" (its seats: impl)')
      const badId = await postJson(`${web.url}/api/runs/..%2Fx/say`, { text: "hi" })
      expect([404, 409]).toContain(badId.status)
      expect(runOnDisk(home, run.id).said).toBeUndefined()
      const ok = await postJson(url, { text: "one more thing" })
      expect(ok.status).toBe(200)
      expect(ok.json().said).toBe("word 1 to seat impl of run 5d5d: the loop (magi serve, or magi web) resumes seat impl with it now")
      const cancel = await postJson(`${url}/1/cancel`, {})
      expect(cancel.status).toBe(200)
      const again = await postJson(`${url}/1/cancel`, {})
      expect(again.status).toBe(409)
      expect(again.json().error).toBe("word 1 is cancelled; say something new instead")
    } finally {
      await web.stop()
    }
  })

  it(
    "takes an image with a word, refusing HTML, SVG and oversize uploads with the reason, and serves it only as its sniffed type",
    { timeout: 90_000 },
    async () => {
      const home = tempDirSync()
      const run = sampleRun("20261204-101700-5e5e", { status: "stopped" })
      seedRun(home, run)
      const visit = await session.open(() => startWeb(home))
      page = visit.page
      const up = (body: Buffer, chunked = false) =>
        request(`${visit.web.url}/api/runs/${run.id}/images`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body, chunked })
      const images = NodePath.join(home, "runs", run.id, "images")
      try {
        const html = await up(Buffer.from("<!DOCTYPE html><script>alert(1)</script>"))
        expect(html.status).toBe(415)
        expect(html.json().error).toContain("it is an HTML or other markup file, not an image")
        const svg = await up(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'))
        expect(svg.status).toBe(415)
        expect(svg.json().error).toContain("SVG")
        // A 200 MB upload is refused on its declared length, before a byte of it is stored
        // (one refused as its bytes pass 8 MiB is test/platform/ImageAssets.test.ts).
        const declared = await rawPost(visit.web.url, `/api/runs/${run.id}/images`, 200 * 1024 * 1024, PNG)
        expect(declared).toContain("413")
        expect(declared).toContain("over 8 MiB")
        expect(NodeFs.existsSync(images) ? NodeFs.readdirSync(images) : []).toEqual([])

        // From the page: a file picked (the camera on a phone) goes with the words, and shows as a thumbnail.
        const shot = NodePath.join(home, "shot.png")
        NodeFs.writeFileSync(shot, PNG)
        await page.goto(`${visit.web.url}/#/runs/${run.id}`)
        expect(await page.locator('.seat-say input[type="file"]').getAttribute("accept")).toBe("image/*")
        await page.getByLabel("Attach an image").setInputFiles(shot)
        await page.getByLabel("Say to the seat").fill("the button is cut off here")
        await page.getByRole("button", { name: "Send" }).tap({ timeout: 10_000 })
        await eventually("the word on disk", () => (runOnDisk(home, run.id).said?.[0]?.images?.length === 1 ? true : undefined), 15_000)
        await page.locator('.seat-say li.said[data-n="1"] img.thumb').waitFor({ state: "attached", timeout: 15_000 })
        const [word] = runOnDisk(home, run.id).said
        expect(word).toMatchObject({ text: "the button is cut off here", images: [expect.stringMatching(/^[0-9a-f]{32}\.png$/)] })
        const served = await request(`${visit.web.url}/api/runs/${run.id}/images/${word.images[0]}`)
        expect(served.status).toBe(200)
        expect(served.headers["content-type"]).toBe("image/png")
        expect(served.headers["x-content-type-options"]).toBe("nosniff")
        expect(served.headers["content-disposition"]).toBe(`inline; filename="${word.images[0]}"`)
        expect(served.body).toEqual(PNG)
        expect((await request(`${visit.web.url}/api/runs/${run.id}/images/..%2F..%2Frun.json`)).status).toBe(400)
        // A word may only name the run's own uploads.
        const foreign = await postJson(`${visit.web.url}/api/runs/${run.id}/say`, { text: "x", images: ["0123456789abcdef0123456789abcdef.png"] })
        expect(foreign.status).toBe(409)
      } finally {
        await session.close()
      }
    }
  )
})
