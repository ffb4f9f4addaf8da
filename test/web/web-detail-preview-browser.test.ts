/**
 * A question with a large detail (issue 27.16): the list every phone
 * refetches on every change sends only the detail's start, and the card
 * fetches the whole of it when the owner opens it. On a phone-sized Chromium
 * against the built `magi web`.
 */
import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { choiceQuestion, tempDirSync } from "../support.js"
import { seed, startWeb } from "./web-support.js"
import { phoneSession } from "./browser-support.js"
import { DETAIL_PREVIEW_CHARS } from "../../src/web/DetailPreview.js"

/** 250,000 characters of log lines an agent pasted, ending in a line only the whole detail holds. */
const LAST = "\nTHE VERY LAST LINE"
const BIG = Array.from({ length: 4200 }, (_, i) => `line ${String(i).padStart(5, "0")}: the build printed this while compiling the cache`).join("\n")
  .slice(0, 250_000 - LAST.length) + LAST

const bytesOf = async (url: string) => Buffer.byteLength(await (await fetch(url, { headers: { "accept-encoding": "identity" } })).text(), "utf8")

describe("a question with a large detail", () => {
  const session = phoneSession()

  it("is listed with a bounded preview, and its card shows the whole detail once opened", { timeout: 60_000 }, async () => {
    expect(BIG.length).toBe(250_000)
    const home = tempDirSync()
    const q = { ...choiceQuestion("20260905-101500-7d7d"), detail: BIG }
    await seed(home, [{ q }])
    const visit = await session.open(() => startWeb(home))
    try {
      const list = await bytesOf(`${visit.web.url}/api/questions`)
      const one = await bytesOf(`${visit.web.url}/api/questions/${q.id}`)
      console.log(`GET /api/questions with one 250 KB detail: ${list} bytes; GET /api/questions/${q.id}: ${one} bytes`)
      // The preview and the record's other fields: nowhere near the detail's size.
      expect(list).toBeLessThan(DETAIL_PREVIEW_CHARS + 4_000)
      expect(one).toBeGreaterThan(BIG.length)
      const listed = Schema.decodeUnknownSync(
        Schema.Struct({ open: Schema.Array(Schema.Struct({ detail: Schema.String, detail_cut: Schema.Boolean })) })
      )(await (await fetch(`${visit.web.url}/api/questions`)).json())
      expect(listed.open[0]!.detail_cut).toBe(true)
      expect(BIG.startsWith(listed.open[0]!.detail)).toBe(true)

      const page = visit.page
      await page.goto(visit.web.url)
      const card = page.locator(`article.card[data-id="${q.id}"]`)
      await card.getByRole("button", { name: "Show more" }).tap({ timeout: 10_000 })
      await card.getByText("THE VERY LAST LINE").waitFor({ timeout: 15_000 })
      expect(await card.getByRole("button", { name: "Show less" }).count()).toBe(1)
      const shown = await card.locator(".detail").innerText()
      expect(shown.length).toBeGreaterThan(249_000)
    } finally {
      await session.close()
    }
  })
})
