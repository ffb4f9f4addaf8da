/**
 * The repository the page files a task into, and plans in, when the owner
 * picks none. Only one the owner named: `npm start` runs `magi web` in
 * magi's own checkout, and a task filed from the phone then ran an agent on
 * magi itself.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { MagiConfig } from "../platform/MagiConfig.js"
import { git } from "../runs/Worktree.js"
import { QueueFeed } from "./QueueFeed.js"

/** The default: a clone's folder, with its `[repos]` name when it has one; or none. */
export interface RepoDefault {
  readonly path: string | null
  readonly name: string | null
}

const NONE: RepoDefault = { path: null, name: null }

/**
 * What the owner named, in this order:
 *
 * - the repository `magi web` was started in, when `[repos]` names it, or
 *   when it is not magi's own checkout (the owner started the page there);
 * - else this host's one `[repos]` clone, when it has exactly one;
 * - else none: the owner picks, and the page says how to name one.
 *
 * Paths are as the disk sees them (real paths), so a clone reached through
 * a link still matches.
 */
export const chooseDefault = (input: {
  readonly startedIn: string | null
  readonly ownCheckout: string | null
  readonly clones: Readonly<Record<string, string>>
}): RepoDefault => {
  const clones = Object.entries(input.clones)
  const { startedIn } = input
  if (startedIn !== null) {
    const named = clones.find(([, path]) => path === startedIn)
    if (named !== undefined) return { path: startedIn, name: named[0] }
    if (startedIn !== input.ownCheckout) return { path: startedIn, name: null }
  }
  const [only] = clones
  return clones.length === 1 && only !== undefined ? { path: only[1], name: only[0] } : NONE
}

/** What the page says, and a write without a repository is refused with, when there is no default. */
export const NO_DEFAULT =
  'no repository is chosen by default: pick one, or name yours in your config\'s `[repos]` (`app = "/path/to/app"`) or start `magi web` inside it (docs/queue.md)'

export class DefaultRepo extends Effect.Service<DefaultRepo>()("magi/web/DefaultRepo", {
  effect: Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const executor = yield* CommandExecutor.CommandExecutor
    const feed = yield* QueueFeed
    const config = yield* Effect.serviceOption(MagiConfig)
    // fallback: an unresolvable path is compared as given
    const real = (path: string) => fs.realPath(path).pipe(Effect.orElseSucceed(() => path))
    const toplevel = (dir: string) =>
      git(dir, "rev-parse", "--show-toplevel").pipe(
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.flatMap(real),
        Effect.option,
        Effect.map(Option.getOrNull)
      )
    // The checkout this magi runs from (`dist/magi.js` inside it), if any: an installed magi has none.
    const entry = process.argv[1]
    const ownCheckout = entry === undefined ? null : yield* toplevel(NodePath.dirname(yield* real(entry)))
    const clones: Record<string, string> = {}
    for (const [name, path] of Object.entries(Option.match(config, { onNone: () => ({}), onSome: (c) => c.repos })))
      clones[name] = yield* real(path)
    const startedIn = Option.isNone(feed.startedIn) ? null : yield* real(feed.startedIn.value)
    const chosen = chooseDefault({ startedIn, ownCheckout, clones })
    // The folder as the rest of the page names it (git's answer, not the real path), when it is the one started in.
    return Option.isSome(feed.startedIn) && chosen.path === startedIn ? { ...chosen, path: feed.startedIn.value } : chosen
  })
}) {}
