/**
 * The phone page: one HTML shell, its script and its stylesheet, all carried
 * inside the magi bundle (no CDN, no web font, nothing fetched at run time:
 * the owner may be on a hotel link, and magi should not tell a third party
 * when they look at their questions).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { script, styles } from "magi:web-client"

/**
 * The page runs only its own script and talks only to this server. Question
 * text is agent-written; should a bug ever put it into markup, this policy is
 * what keeps it from running.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const HEADERS = {
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<title>magi</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css">
<script defer src="/app.js"></script>
</head>
<body>
<noscript>magi's page needs JavaScript; <code>magi answer</code> works at a terminal.</noscript>
</body>
</html>
`

export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/", HttpServerResponse.text(INDEX, { contentType: "text/html; charset=utf-8", headers: HEADERS })),
  HttpRouter.get(
    "/app.js",
    HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8", headers: HEADERS })
  ),
  HttpRouter.get("/app.css", HttpServerResponse.text(styles, { contentType: "text/css; charset=utf-8", headers: HEADERS }))
)
