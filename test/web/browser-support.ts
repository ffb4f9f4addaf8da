/** Debian's Chromium through playwright-core, as every browser test here drives it. */
import { afterAll, beforeAll } from "vitest"
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core"
import * as NodeZlib from "node:zlib"
import type { Web } from "./web-support.js"

export const CHROMIUM = "/usr/bin/chromium"
export const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run"
]
export const PHONE = { width: 390, height: 844 }

/** A phone as the tests hold one: 390×844 at twice the pixels, a touch screen. */
export const PHONE_CONTEXT: BrowserContextOptions = { viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true }

/** Chromium as the tests launch it. */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true })

/** One test's server and phone-sized page. */
export interface PhoneVisit {
  readonly web: Web
  readonly context: BrowserContext
  readonly page: Page
}

/**
 * One Chromium for the test file's `describe` it is called in (launched
 * before its tests, closed after them) and, per test, a fresh server and a
 * phone-sized page: `open(start)` starts the server `start` makes and opens
 * a page (with `options` over `PHONE_CONTEXT`), `close()` ends both; close
 * in a `finally`, as an open page holds the server's event stream.
 */
export const phoneSession = () => {
  let browser: Browser | undefined
  let visit: PhoneVisit | undefined
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })
  return {
    browser: (): Browser => browser!,
    open: async (start: () => Promise<Web>, options: BrowserContextOptions = {}): Promise<PhoneVisit> => {
      const web = await start()
      const context = await browser!.newContext({ ...PHONE_CONTEXT, ...options })
      visit = { web, context, page: await context.newPage() }
      return visit
    },
    close: async () => {
      const done = visit
      visit = undefined
      await done?.context.close()
      await done?.web.stop()
    }
  }
}

/** A real 2×2 PNG, so "the panel's own image loads" can be checked. */
export const tinyPng = () => {
  const crc = (buf: Buffer) => {
    let c = ~0
    for (const b of buf) {
      c ^= b
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1))
    }
    return ~c >>> 0
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data])
    const out = Buffer.alloc(12 + data.length)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc(body), 8 + data.length)
    return out
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(2, 0)
  header.writeUInt32BE(2, 4)
  header.writeUInt8(8, 8)
  header.writeUInt8(2, 9)
  const rows = Buffer.from([0, 52, 81, 178, 52, 81, 178, 0, 52, 81, 178, 52, 81, 178])
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", header),
    chunk("IDAT", NodeZlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0))
  ])
}
