/**
 * The home-screen icon as a phone reads it: a valid PNG (every chunk's CRC
 * checks out, the pixels inflate to the declared size) showing the mark
 * inside the maskable safe zone, and an SVG of the same picture.
 */
import { describe, expect, it } from "vitest"
import * as NodeZlib from "node:zlib"
import { ICON_BACKGROUND, iconPng, iconSvg } from "../../src/web/Icon.js"

/** A PNG's chunks, each one's CRC checked by a CRC-32 written here. */
const chunks = (png: Buffer) => {
  const table = Array.from({ length: 256 }, (_, k) => {
    let c = k
    for (let i = 0; i < 8; i++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (b: Buffer) => {
    let c = 0xffffffff
    for (const byte of b) c = table[(c ^ byte) & 0xff]! ^ (c >>> 8)
    return (c ^ 0xffffffff) >>> 0
  }
  const out: Array<{ type: string; data: Buffer }> = []
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at)
    const type = png.subarray(at + 4, at + 8).toString("latin1")
    const data = png.subarray(at + 8, at + 8 + length)
    expect(png.readUInt32BE(at + 8 + length), `${type} CRC`).toBe(crc(png.subarray(at + 4, at + 8 + length)))
    out.push({ type, data })
    at += 12 + length
  }
  return out
}

const hex = (r: number, g: number, b: number) => `#${[r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("")}`

describe("the home-screen icon", () => {
  for (const size of [180, 192, 512]) {
    it(`is a valid ${size}×${size} PNG with the white bubble and its dots inside the maskable safe zone`, () => {
      const png = iconPng(size)
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      const parts = chunks(png)
      expect(parts.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"])
      const header = parts[0]!.data
      expect([header.readUInt32BE(0), header.readUInt32BE(4), header[8], header[9]]).toEqual([size, size, 8, 6])
      const rows = NodeZlib.inflateSync(parts[1]!.data)
      expect(rows.length).toBe(size * (size * 4 + 1))
      const at = (fx: number, fy: number) => {
        const [x, y] = [Math.floor(fx * size), Math.floor(fy * size)]
        const i = y * (size * 4 + 1) + 1 + x * 4
        return { colour: hex(rows[i]!, rows[i + 1]!, rows[i + 2]!), alpha: rows[i + 3] }
      }
      // Full bleed: a launcher's mask cuts the corners, so they are background, opaque.
      expect(at(0, 0)).toEqual({ colour: ICON_BACKGROUND, alpha: 255 })
      expect(at(0.99, 0.99).colour).toBe(ICON_BACKGROUND)
      // The bubble is white, its middle dot the accent.
      expect(at(0.3, 0.35).colour).toBe("#ffffff")
      expect(at(0.5, 0.45).colour).toBe(ICON_BACKGROUND)
      expect(at(0.35, 0.72).colour).toBe("#ffffff") // the tail
      // Nothing but background outside the safe zone (a circle of radius 0.4).
      for (let k = 0; k < 360; k += 5) {
        const r = 0.41
        const p = at(0.5 + r * Math.cos((k * Math.PI) / 180), 0.5 + r * Math.sin((k * Math.PI) / 180))
        expect(p.colour, `at ${k}°`).toBe(ICON_BACKGROUND)
      }
    })
  }

  it("is drawn once per size and then served from memory", () => {
    expect(iconPng(192)).toBe(iconPng(192))
  })

  it("has an SVG of the same picture: accent background, white bubble, three dots", () => {
    const svg = iconSvg()
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">')).toBe(true)
    expect(svg).toContain(`<rect width="100" height="100" rx="20" fill="${ICON_BACKGROUND}"/>`)
    expect(svg.match(/<circle /g)?.length).toBe(3)
    expect(svg).toContain('fill="#ffffff"')
  })
})
