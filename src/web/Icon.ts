/**
 * magi's home-screen icon: a speech bubble with three dots ("an agent is
 * asking") on the page's accent colour.
 *
 * The mark is one list of shapes, written out as SVG for browsers that take
 * it and rasterised here into the PNGs a phone installs (192 and 512 for the
 * manifest, 180 for iOS). Drawing it in code keeps the repository free of
 * binary files that could drift from the SVG, and the bundle free of an
 * image library; it is drawn once per size, on first request.
 */
import * as NodeZlib from "node:zlib"

/** The page's light accent (`--accent` in styles.css). */
export const ICON_BACKGROUND = "#3451b2"
const INK = "#ffffff"

type Shape =
  | { readonly kind: "rect"; readonly x: number; readonly y: number; readonly w: number; readonly h: number; readonly r: number; readonly fill: string }
  | { readonly kind: "circle"; readonly cx: number; readonly cy: number; readonly r: number; readonly fill: string }
  | {
    readonly kind: "triangle"
    readonly points: readonly [readonly [number, number], readonly [number, number], readonly [number, number]]
    readonly fill: string
  }

/**
 * In a unit square. Everything but the background stays inside the circle
 * of radius 0.4 around the centre: the safe zone of a maskable icon, which
 * a launcher may crop to a circle or a squircle.
 */
const MARK: ReadonlyArray<Shape> = [
  { kind: "rect", x: 0.22, y: 0.25, w: 0.56, h: 0.4, r: 0.1, fill: INK },
  { kind: "triangle", points: [[0.33, 0.6], [0.33, 0.77], [0.5, 0.6]], fill: INK },
  { kind: "circle", cx: 0.36, cy: 0.45, r: 0.048, fill: ICON_BACKGROUND },
  { kind: "circle", cx: 0.5, cy: 0.45, r: 0.048, fill: ICON_BACKGROUND },
  { kind: "circle", cx: 0.64, cy: 0.45, r: 0.048, fill: ICON_BACKGROUND }
]

const n = (v: number) => String(Math.round(v * 1000) / 10)

/** The icon as SVG, in a 100-unit box with rounded corners (a tab's icon has no launcher mask). */
export const iconSvg = (): string => {
  const shapes = MARK.map((s) =>
    s.kind === "rect"
      ? `<rect x="${n(s.x)}" y="${n(s.y)}" width="${n(s.w)}" height="${n(s.h)}" rx="${n(s.r)}" fill="${s.fill}"/>`
      : s.kind === "circle"
      ? `<circle cx="${n(s.cx)}" cy="${n(s.cy)}" r="${n(s.r)}" fill="${s.fill}"/>`
      : `<polygon points="${s.points.map(([x, y]) => `${n(x)},${n(y)}`).join(" ")}" fill="${s.fill}"/>`
  )
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">`,
    `<rect width="100" height="100" rx="20" fill="${ICON_BACKGROUND}"/>`,
    ...shapes,
    `</svg>\n`
  ].join("")
}

// -- rasterising ------------------------------------------------------------------

/** Signed distance (negative inside) from (px, py) to the shape, in unit-square units. */
const distance = (s: Shape, px: number, py: number): number => {
  if (s.kind === "circle") return Math.hypot(px - s.cx, py - s.cy) - s.r
  if (s.kind === "rect") {
    // A rounded box: distance to the inner rectangle, less the corner radius.
    const hx = s.w / 2 - s.r
    const hy = s.h / 2 - s.r
    const dx = Math.abs(px - (s.x + s.w / 2)) - hx
    const dy = Math.abs(py - (s.y + s.h / 2)) - hy
    return Math.hypot(Math.max(dx, 0), Math.max(dy, 0)) + Math.min(Math.max(dx, dy), 0) - s.r
  }
  // A triangle: the largest signed distance to its three edges' lines
  // (exact inside and near the edges, which is all anti-aliasing needs).
  const [a, b, c] = s.points
  const area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
  const side = area > 0 ? 1 : -1
  const edge = (x0: number, y0: number, x1: number, y1: number) => -(side * ((x1 - x0) * (py - y0) - (y1 - y0) * (px - x0))) / Math.hypot(x1 - x0, y1 - y0)
  return Math.max(edge(a[0], a[1], b[0], b[1]), edge(b[0], b[1], c[0], c[1]), edge(c[0], c[1], a[0], a[1]))
}

/** The shape's bounding box: outside it (by more than a pixel) it covers nothing, and is not looked at. */
const bounds = (s: Shape): [number, number, number, number] => {
  if (s.kind === "circle") return [s.cx - s.r, s.cy - s.r, s.cx + s.r, s.cy + s.r]
  if (s.kind === "rect") return [s.x, s.y, s.x + s.w, s.y + s.h]
  const xs = s.points.map((p) => p[0])
  const ys = s.points.map((p) => p[1])
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
}

const rgb = (hex: string): [number, number, number] => [
  parseInt(hex.slice(1, 3), 16),
  parseInt(hex.slice(3, 5), 16),
  parseInt(hex.slice(5, 7), 16)
]

/** RGBA pixels, `size`×`size`, full-bleed background (a launcher applies its own mask). */
export const iconPixels = (size: number): Uint8Array => {
  const pixels = new Uint8Array(size * size * 4)
  const background = rgb(ICON_BACKGROUND)
  const fills = MARK.map((s) => rgb(s.fill))
  const pixel = 1 / size
  const boxes = MARK.map((s) => {
    const [x0, y0, x1, y1] = bounds(s)
    return [x0 - pixel, y0 - pixel, x1 + pixel, y1 + pixel] as const
  })
  for (let at = 0; at < pixels.length; at += 4) {
    pixels[at] = background[0]
    pixels[at + 1] = background[1]
    pixels[at + 2] = background[2]
    pixels[at + 3] = 255
  }
  // Only the pixels the mark can touch are worked out; the rest is background.
  const from = (v: number) => Math.max(0, Math.floor(v * size))
  const to = (v: number) => Math.min(size, Math.ceil(v * size))
  const [left, top] = [from(Math.min(...boxes.map((b) => b[0]))), from(Math.min(...boxes.map((b) => b[1])))]
  const [right, bottom] = [to(Math.max(...boxes.map((b) => b[2]))), to(Math.max(...boxes.map((b) => b[3])))]
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) {
      const px = (x + 0.5) / size
      const py = (y + 0.5) / size
      let r = background[0]
      let g = background[1]
      let b = background[2]
      for (let i = 0; i < MARK.length; i++) {
        const [x0, y0, x1, y1] = boxes[i]!
        if (px < x0 || px > x1 || py < y0 || py > y1) continue
        // Coverage falls from 1 to 0 across one pixel at the edge: smooth
        // edges without supersampling.
        const cover = Math.min(1, Math.max(0, 0.5 - distance(MARK[i]!, px, py) * size))
        if (cover === 0) continue
        const [fr, fg, fb] = fills[i]!
        r += (fr - r) * cover
        g += (fg - g) * cover
        b += (fb - b) * cover
      }
      const at = (y * size + x) * 4
      pixels[at] = Math.round(r)
      pixels[at + 1] = Math.round(g)
      pixels[at + 2] = Math.round(b)
    }
  }
  return pixels
}

const CRC_TABLE = Array.from({ length: 256 }, (_, k) => {
  let c = k
  for (let i = 0; i < 8; i++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const chunk = (type: string, data: Uint8Array): Buffer => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "latin1")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** RGBA pixels as a PNG file (8-bit truecolour with alpha, no filtering). */
export const encodePng = (size: number, pixels: Uint8Array): Buffer => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(size, 0)
  header.writeUInt32BE(size, 4)
  header[8] = 8 // bits per channel
  header[9] = 6 // RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) {
    rows[y * (size * 4 + 1)] = 0 // filter: none
    rows.set(pixels.subarray(y * size * 4, (y + 1) * size * 4), y * (size * 4 + 1) + 1)
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", NodeZlib.deflateSync(rows)),
    chunk("IEND", new Uint8Array(0))
  ])
}

const drawn = new Map<number, Buffer>()

/** The icon as a PNG `size` pixels square, drawn once and kept. */
export const iconPng = (size: number): Buffer => {
  let png = drawn.get(size)
  if (png === undefined) {
    png = encodePng(size, iconPixels(size))
    drawn.set(size, png)
  }
  return png
}
