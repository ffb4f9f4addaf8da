/**
 * Whether anyone is told when a question arrives, and by what: `[notify]
 * ntfy` and/or `[notify] command`. The page's empty state says so, because an owner who set up
 * `magi web` but no notifier would otherwise wait for taps that never come.
 *
 * Read from the config `magi web` was started with (the one its loop
 * notifies from), and kept for a little while so a health check costs no
 * file reads on most calls.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { load, userConfigFile } from "../platform/MagiConfig.js"

/**
 * Long enough that health checks and page loads rarely read the config;
 * short enough that an owner who just added a notifier sees the page say so
 * on their next reload.
 */
export const NOTIFY_SETTING_TTL = Duration.seconds(30)

export class NotifySetting extends Context.Tag("magi/web/NotifySetting")<
  NotifySetting,
  {
    readonly configured: Effect.Effect<boolean>
    /** What notifies: `ntfy`, `command`, both or neither, as the page names them. */
    readonly via: Effect.Effect<ReadonlyArray<"ntfy" | "command">>
    /**
     * The owner's config file as this server reads it (`XDG_CONFIG_HOME`
     * moves it): where the page says to set a notifier, so it never names
     * a file nothing reads.
     */
    readonly file: string
  }
>() {
  static layer = Layer.effect(
    NotifySetting,
    Effect.gen(function* () {
      const via = yield* Effect.cachedWithTTL(
        // A config that cannot be read notifies nobody either.
        Effect.suspend(() => load(process.cwd())).pipe(
          Effect.map((settings) => [...(settings.ntfy !== null ? ["ntfy" as const] : []), ...(settings.notifyCommand.length > 0 ? ["command" as const] : [])]),
          // display: the notification channels shown; none when they cannot be read
          Effect.orElseSucceed((): ReadonlyArray<"ntfy" | "command"> => [])
        ),
        NOTIFY_SETTING_TTL
      )
      return { via, configured: Effect.map(via, (v) => v.length > 0), file: yield* userConfigFile }
    })
  )
}
