/**
 * Where magi keeps its state: `MAGI_HOME`, else `$XDG_DATA_HOME/magi`, else
 * `~/.local/share/magi`. Every store hangs off this one directory, so a test
 * (or a second owner on the same machine) points a whole magi elsewhere by
 * providing a different layer.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeOs from "node:os"

export class MagiHome extends Context.Tag("magi/MagiHome")<MagiHome, { readonly dir: string }>() {
  /** A home at an explicit directory. */
  static at = (dir: string) => Layer.succeed(MagiHome, { dir: NodePath.resolve(dir) })

  /** Where the owner's home is, from the environment, as it is (for `magi doctor`, which only looks). */
  static locatedFromEnv = Layer.effect(
    MagiHome,
    Effect.gen(function* () {
      const explicit = yield* Config.option(Config.nonEmptyString("MAGI_HOME"))
      if (Option.isSome(explicit)) return { dir: NodePath.resolve(explicit.value) }
      const xdg = yield* Config.option(Config.nonEmptyString("XDG_DATA_HOME"))
      if (Option.isSome(xdg)) return { dir: NodePath.join(xdg.value, "magi") }
      const home = yield* Config.string("HOME").pipe(Config.withDefault(NodeOs.homedir()))
      return { dir: NodePath.join(home, ".local", "share", "magi") }
    }).pipe(Effect.orDie)
  )

  /** The owner's home, from the environment, made private first if it does not exist yet (`ownHome`). */
  static fromEnv = Layer.effect(MagiHome, Effect.tap(MagiHome, (home) => ownHome(home.dir))).pipe(Layer.provide(MagiHome.locatedFromEnv))

  /** A home the owner named (`--home DIR`), made private first if it does not exist yet. */
  static owned = (dir: string) => Layer.effect(MagiHome, Effect.as(ownHome(NodePath.resolve(dir)), { dir: NodePath.resolve(dir) }))
}

/**
 * Make the home 0700 when it does not exist yet: it holds every question,
 * answer and secret (the link key, the push keys), so no other user may
 * list or read it. An existing home is left as its owner made it (a group
 * may share one on purpose, or it may be a mount): `magi doctor` warns
 * about one other users can read and says the chmod. Synchronous, once at
 * start-up, before any store makes a folder under it (with the usual 755).
 */
const ownHome = (dir: string) =>
  Effect.sync(() => {
    if (!NodeFs.existsSync(dir)) NodeFs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  }).pipe(Effect.catchAllDefect((e) => Effect.logDebug(`the home ${dir} could not be made: ${String(e)}; each store says so when it needs it`)))

/** `<home>/questions`, where one JSON file is one question. */
export const questionsDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "questions")
