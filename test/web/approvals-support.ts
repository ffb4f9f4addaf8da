/** Saved approval rules planted in a home as an approving process leaves them, and `magi approvals` run on that home. */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "./web-support.js"

export const plantRule = (home: string, id: string, rule: string, repo = "/work/site", question = "20261201-120000-ab12") => {
  const dir = NodePath.join(home, "approval-rules")
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(
    NodePath.join(dir, `${id}.json`),
    JSON.stringify({ schema: 1, id, rule, repo, added_at: "2026-12-01T12:00:00.000Z", question }, null, 2) + "\n"
  )
}

/** The rules `magi approvals list --json` sees on `home`. */
export const savedByCli = (home: string): ReadonlyArray<string> =>
  (
    JSON.parse(
      execFileSync(process.execPath, [MAGI, "approvals", "list", "--json"], {
        env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config"), MAGI_STORE_URL: "" },
        encoding: "utf8"
      })
    ) as { saved: ReadonlyArray<{ rule: string }> }
  ).saved.map((r) => r.rule)
