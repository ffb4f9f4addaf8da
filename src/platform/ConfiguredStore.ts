/**
 * The store this process is configured for: `MAGI_STORE_URL`, else the
 * config's `[store] url` (when a config is provided), else the home folder.
 * The store itself (`store/StoreBackend.ts`) knows nothing of magi's config
 * or home; this is where the two meet, so the store stays the bottom layer.
 */
import { Config, Effect, Layer, Option } from "effect"
import * as Postgres from "../store/postgres/Postgres.js"
import { StoreBackend } from "../store/StoreBackend.js"
import { MagiConfig } from "./MagiConfig.js"
import { MagiHome } from "./MagiHome.js"

/** The records in the home's folders. */
export const files: Layer.Layer<StoreBackend, never, MagiHome> = Layer.unwrapEffect(Effect.map(MagiHome, (home) => StoreBackend.filesAt(home.dir)))

/** The store URL from the environment, else from the config when one is provided. */
export const configuredUrl = Effect.gen(function* () {
  const fromEnv = yield* Config.option(Config.nonEmptyString("MAGI_STORE_URL")).pipe(Effect.orDie)
  if (Option.isSome(fromEnv)) return Option.some(fromEnv.value.trim())
  const config = yield* Effect.serviceOption(MagiConfig)
  return Option.flatMap(config, (c) => Option.fromNullable(c.storeUrl))
})

/**
 * The configured backend. A backend already provided around it wins (a
 * test's database, or the one a command built once for all its stores): each
 * store's layer provides this one, and must not replace the backend it was
 * given with another.
 */
export const layer: Layer.Layer<StoreBackend, Postgres.StoreUnavailable | Postgres.StoreUrlInvalid, MagiHome> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const given = yield* Effect.serviceOption(StoreBackend)
    if (Option.isSome(given)) return Layer.succeed(StoreBackend, given.value)
    const url = yield* configuredUrl
    if (Option.isNone(url)) return files
    return StoreBackend.postgres(yield* Postgres.parseUrl(url.value))
  })
)
