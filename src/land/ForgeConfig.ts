/**
 * `[forge]`: where the forge's API is. `api` is GitHub Enterprise's base
 * URL (`https://ghe.example/api/v3`); unset, the public API. Read from the
 * same TOML layers as the rest of the config, from the directory the
 * process works in, so one daemon talks to one forge. Pure once read.
 */
import { Data, Effect } from "effect"
import { loadTable } from "../platform/MagiConfig.js"
import { DEFAULT_API } from "./ForgeRemote.js"

export class ForgeConfigError extends Data.TaggedError("ForgeConfigError")<{ readonly value: string; readonly files: ReadonlyArray<string> }> {
  override get message() {
    return `\`forge.api\` must be an http(s) URL such as "https://ghe.example/api/v3", not ${JSON.stringify(this.value)} (in ${
      this.files.join(" or ") || "config"
    })`
  }
}

export interface ForgeSettings {
  readonly api: string
}

type Table = { readonly [key: string]: unknown }
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v)

export const settingsOf = (merged: Table, files: ReadonlyArray<string>): Effect.Effect<ForgeSettings, ForgeConfigError> => {
  const forge = isTable(merged.forge) ? merged.forge : {}
  const api = forge.api
  if (api === undefined) return Effect.succeed({ api: DEFAULT_API })
  const ok = typeof api === "string" && /^https?:\/\/[^\s/]+/.test(api)
  return ok ? Effect.succeed({ api: api.replace(/\/+$/, "") }) : Effect.fail(new ForgeConfigError({ value: String(api), files }))
}

export const load = Effect.fn("ForgeConfig.load")(function* (cwd: string) {
  const { table, files } = yield* loadTable(cwd)
  return yield* settingsOf(table, files)
})
