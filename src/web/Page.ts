/**
 * The phone page: one HTML shell, its script and its stylesheet, all carried
 * inside the magi bundle (no CDN, no web font, nothing fetched at run time:
 * the owner may be on a hotel link, and magi should not tell a third party
 * when they look at their questions).
 *
 * With the manifest and icons below, the page installs to a phone's home
 * screen and opens as an app of its own (no browser bar).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { scripts, styles } from "magi:web-client"
import { iconPng, iconSvg } from "./Icon.js"

/**
 * The page runs only its own script and talks only to this server. Question
 * text is agent-written; should a bug ever put it into markup, this policy is
 * what keeps it from running. (`manifest-src` because `default-src 'none'`
 * would otherwise refuse the page its own manifest.)
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const HEADERS = {
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

/**
 * The page's background in each theme (`--bg` in styles.css): the phone
 * paints its status bar and the app's splash screen in it, so the page
 * seems to run to the screen's edge.
 */
export const THEME_LIGHT = "#f6f6f3"
export const THEME_DARK = "#141413"

export const MANIFEST = {
  name: "magi: questions from your agents",
  short_name: "magi",
  description: "Answer the questions your coding agents ask, from your phone.",
  id: "/",
  start_url: "/#/questions",
  scope: "/",
  display: "standalone",
  background_color: THEME_LIGHT,
  theme_color: THEME_LIGHT,
  icons: [
    { src: "/icon.svg", sizes: "any", type: "image/svg+xml" },
    { src: "/icon-192.png", sizes: "192x192", type: "image/png" },
    { src: "/icon-512.png", sizes: "512x512", type: "image/png" },
    // The same picture: its mark sits inside a maskable icon's safe zone.
    { src: "/icon-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" }
  ]
}

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="${THEME_LIGHT}" media="(prefers-color-scheme: light)">
<meta name="theme-color" content="${THEME_DARK}" media="(prefers-color-scheme: dark)">
<meta name="apple-mobile-web-app-capable" content="yes">
<meta name="apple-mobile-web-app-title" content="magi">
<title>magi</title>
<link rel="manifest" href="/manifest.webmanifest">
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="apple-touch-icon" href="/apple-touch-icon.png">
<link rel="stylesheet" href="/app.css">
<link rel="preload" href="/api/questions" as="fetch" crossorigin>
<script type="module" src="/app.js"></script>
</head>
<body>
<noscript>magi's page needs JavaScript; <code>magi answer</code> works at a terminal.</noscript>
</body>
</html>
`

/**
 * A PNG of the icon, drawn on the first request for its size: 192 and 512
 * are what installers ask a manifest for, 180 is iOS's home-screen icon.
 */
const png = (size: number) => Effect.sync(() => HttpServerResponse.uint8Array(iconPng(size), { contentType: "image/png", headers: HEADERS }))

/**
 * A chunk's name carries a hash of its content, so a browser may keep it for
 * good; the entry (`app.js`) is looked at again on every visit, which is
 * what brings a new build's chunks in.
 */
const IMMUTABLE = { ...HEADERS, "cache-control": "public, max-age=31536000, immutable" }

/** `app.js` and its chunks, each at its own path. */
const scriptRoutes = Object.entries(scripts).reduce(
  (router, [path, text]) =>
    HttpRouter.get(
      router,
      `/${path}`,
      HttpServerResponse.text(text, {
        contentType: "text/javascript; charset=utf-8",
        headers: path.startsWith("chunks/") ? IMMUTABLE : HEADERS
      })
    ),
  HttpRouter.empty
)

export const router = HttpRouter.empty.pipe(
  HttpRouter.concat(scriptRoutes),
  HttpRouter.get("/", HttpServerResponse.text(INDEX, { contentType: "text/html; charset=utf-8", headers: HEADERS })),
  HttpRouter.get("/app.css", HttpServerResponse.text(styles, { contentType: "text/css; charset=utf-8", headers: HEADERS })),
  HttpRouter.get(
    "/manifest.webmanifest",
    HttpServerResponse.text(JSON.stringify(MANIFEST), { contentType: "application/manifest+json", headers: HEADERS })
  ),
  HttpRouter.get("/icon.svg", HttpServerResponse.text(iconSvg(), { contentType: "image/svg+xml", headers: HEADERS })),
  HttpRouter.get("/icon-192.png", png(192)),
  HttpRouter.get("/icon-512.png", png(512)),
  HttpRouter.get("/apple-touch-icon.png", png(180))
)
