/**
 * Where magi keeps its state: `MAGI_HOME`, else `$XDG_DATA_HOME/magi`, else
 * `~/.local/share/magi`. Every store hangs off this one directory, so a test
 * (or a second owner on the same machine) points a whole magi elsewhere by
 * providing a different layer.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import * as NodePath from "node:path"
import * as NodeOs from "node:os"

export class MagiHome extends Context.Tag("magi/MagiHome")<MagiHome, { readonly dir: string }>() {
  /** A home at an explicit directory. */
  static at = (dir: string) => Layer.succeed(MagiHome, { dir: NodePath.resolve(dir) })

  /** The owner's home, from the environment. */
  static fromEnv = Layer.effect(
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
}

/** `<home>/questions`, where one JSON file is one question. */
export const questionsDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "questions")
