/**
 * What an uploaded image is, judged from its first bytes, never from its
 * name or the type its sender claims: an HTML page renamed `shot.png` or an
 * SVG (which can carry script) is refused, so nothing magi serves back can
 * run in the page. Only the four raster formats every phone and CLI read.
 * Pure: bytes in, a type or the reason out.
 */

/** The most an image may hold: a phone's screenshot or photo, well inside it. */
export const IMAGE_MAX_BYTES = 8 * 1024 * 1024

/** How many leading bytes the sniffing reads. */
export const SNIFF_BYTES = 16

export interface ImageKind {
  readonly mime: "image/png" | "image/jpeg" | "image/gif" | "image/webp"
  readonly ext: "png" | "jpg" | "gif" | "webp"
}

const starts = (head: Uint8Array, bytes: ReadonlyArray<number>, at = 0) => bytes.every((b, i) => head[at + i] === b)
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))

/** The image's type from its first bytes, or why it is not one magi takes. */
export const sniff = (head: Uint8Array): { readonly _tag: "Image"; readonly kind: ImageKind } | { readonly _tag: "Refused"; readonly why: string } => {
  if (starts(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { _tag: "Image", kind: { mime: "image/png", ext: "png" } }
  if (starts(head, [0xff, 0xd8, 0xff])) return { _tag: "Image", kind: { mime: "image/jpeg", ext: "jpg" } }
  if (starts(head, ascii("GIF87a")) || starts(head, ascii("GIF89a"))) return { _tag: "Image", kind: { mime: "image/gif", ext: "gif" } }
  if (starts(head, ascii("RIFF")) && starts(head, ascii("WEBP"), 8)) return { _tag: "Image", kind: { mime: "image/webp", ext: "webp" } }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(head).replace(/^\uFEFF/, "").trimStart().toLowerCase()
  if (head.length === 0) return { _tag: "Refused", why: "the file is empty" }
  if (text.startsWith("<svg") || text.startsWith("<?xml"))
    return { _tag: "Refused", why: "it is an SVG or XML file, which can carry script; send a PNG, JPEG, GIF or WebP (a screenshot is one)" }
  if (text.startsWith("<"))
    return { _tag: "Refused", why: "it is an HTML or other markup file, not an image, whatever its name says; send a PNG, JPEG, GIF or WebP" }
  return { _tag: "Refused", why: "its bytes are not a PNG, JPEG, GIF or WebP image, whatever its name says" }
}

/** Why an image of `bytes` bytes is too large, or undefined. */
export const tooLarge = (bytes: number): string | undefined =>
  bytes > IMAGE_MAX_BYTES
    ? `the image is over ${IMAGE_MAX_BYTES / 1024 / 1024} MiB (${
      (bytes / 1024 / 1024).toFixed(1)
    } MiB sent so far); send a smaller screenshot or a cropped photo`
    : undefined

/** An asset's stored name: a hex digest and its sniffed extension, nothing from the sender. */
const ASSET_NAME = /^[0-9a-f]{16,64}\.(png|jpg|gif|webp)$/
export const validAssetName = (name: string): boolean => ASSET_NAME.test(name)

/** The type an asset is served with: its sniffed extension's, nothing else. */
export const mimeOfAsset = (name: string): ImageKind["mime"] | undefined => {
  const ext = ASSET_NAME.exec(name)?.[1]
  return ext === "png" ? "image/png" : ext === "jpg" ? "image/jpeg" : ext === "gif" ? "image/gif" : ext === "webp" ? "image/webp" : undefined
}
