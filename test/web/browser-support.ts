/** Debian's Chromium through playwright-core, as every browser test here drives it. */
import * as NodeFs from "node:fs"
import * as NodeZlib from "node:zlib"

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
