/** Starting a `magi web` that devices must pair with, and the real CLI that pairs them. */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import { MAGI } from "./web-support.js"

export const PUBLIC = "http://phone.example:7878"

/** A home whose config says the page is reached at `publicUrl`. */
export const homeWithPublicUrl = (publicUrl = PUBLIC): string => {
  const home = tempDirSync()
  NodeFs.mkdirSync(NodePath.join(home, "config", "magi"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(home, "config", "magi", "config.toml"), `[web]\npublic_url = "${publicUrl}"\n`)
  return home
}

/** Run the real `magi` CLI on `home`; stdout. */
export const magi = (home: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): string =>
  execFileSync(process.execPath, [MAGI, ...args], {
    cwd: home,
    encoding: "utf8",
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config"), ...env }
  })

/** A fresh code from `magi web pair`. */
export const pairingCode = (home: string, env: Record<string, string> = {}): string => {
  const out = magi(home, ["web", "pair"], env)
  const code = /^pairing code: (\S+)$/m.exec(out)?.[1]
  if (code === undefined) throw new Error(`no code in:\n${out}`)
  return code
}
