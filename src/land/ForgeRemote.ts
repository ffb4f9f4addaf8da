/**
 * Which repository on the forge a git remote names, read from its URL
 * (`https://github.com/o/r.git`, `git@github.com:o/r.git`,
 * `ssh://git@host/o/r`), and which host the configured API serves
 * (`https://api.github.com` is github.com; Enterprise's
 * `https://ghe.example/api/v3` is ghe.example). Pure.
 */
import type { ForgeRepo } from "./Forge.js"

export const DEFAULT_API = "https://api.github.com"

export interface RemoteRepo extends ForgeRepo {
  readonly host: string
}

const strip = (path: string): string => path.replace(/^\/+/, "").replace(/\/+$/, "").replace(/\.git$/, "")

const split = (host: string, path: string): RemoteRepo | null => {
  const parts = strip(path).split("/")
  if (parts.length !== 2 || parts.some((p) => p === "" || !/^[A-Za-z0-9._-]+$/.test(p))) return null
  return { host: host.toLowerCase(), owner: parts[0]!, name: parts[1]! }
}

/** The host, owner and name a remote URL names, or null when it names none (a local path, a bare host). */
export const parseRemote = (url: string): RemoteRepo | null => {
  const text = url.trim()
  // scp-like: git@github.com:o/r.git (no scheme, a colon before any slash)
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(text)
  if (scp !== null && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return split(scp[1]!, scp[2]!)
  try {
    const u = new URL(text)
    if (!["https:", "http:", "ssh:", "git:"].includes(u.protocol) || u.host === "") return null
    return split(u.protocol === "ssh:" ? u.hostname : u.host, u.pathname)
  } catch {
    return null
  }
}

/** The web host whose repositories `api` serves: `api.github.com` → `github.com`, `ghe.example/api/v3` → `ghe.example`. */
export const hostOfApi = (api: string): string | null => {
  try {
    const u = new URL(api)
    return u.host.toLowerCase() === "api.github.com" ? "github.com" : u.host.toLowerCase()
  } catch {
    return null
  }
}

/** Does the remote name a repository on the forge `api` serves? */
export const sameForge = (remote: RemoteRepo, api: string): boolean => hostOfApi(api) === remote.host

/** The API's base without a trailing slash, so paths join as `${base}/repos/...`. */
export const apiBase = (api: string): string => api.replace(/\/+$/, "")
