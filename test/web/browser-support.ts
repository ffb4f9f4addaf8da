/** Debian's Chromium through playwright-core, as every browser test here drives it. */
import * as NodeFs from "node:fs"

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
export const haveChromium = NodeFs.existsSync(CHROMIUM)
