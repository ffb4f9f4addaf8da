/**
 * Whether anyone is told when a question arrives: is a `[notify] command`
 * configured? The page's empty state says so, because an owner who set up
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
    Effect.all({
      configured: Effect.cachedWithTTL(
        // A config that cannot be read notifies nobody either.
        Effect.suspend(() => load(process.cwd())).pipe(
          Effect.map((settings) => settings.notifyCommand.length > 0 || settings.ntfy !== null),
          Effect.orElseSucceed(() => false)
        ),
        NOTIFY_SETTING_TTL
      ),
      file: userConfigFile
    })
  )
}
