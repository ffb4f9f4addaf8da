/**
 * The lint rule that keeps a swallowed failure honest
 * (scripts/eslint/fallback-reason.mjs, docs/development.md): an
 * `Effect.orElseSucceed`, `catchAll`, `catchAllCause`, `orElse` or `ignore`
 * without a `// display: <why>` or `// fallback: <why>` beside it is
 * refused, and so is the comment with no reason; `catchTag` and the other
 * combinators pass untouched.
 */
import { Linter } from "eslint"
import tseslint from "typescript-eslint"
import { describe, expect, it } from "vitest"
// @ts-expect-error -- a plain ESM script, without types
import magi from "../../scripts/eslint/fallback-reason.mjs"

const linter = new Linter({ configType: "flat" })
const config = [{
  files: ["**/*.ts"],
  languageOptions: { parser: tseslint.parser },
  plugins: { magi },
  rules: { "magi/fallback-reason": "error" }
}] as Linter.Config[]

/** The rule's messages on `code`, as `line: text`. */
const lint = (code: string) => linter.verify(code, config, "src/x/Y.ts").map((m) => `${m.line}: ${m.message}`)

describe("the fallback-reason lint rule", () => {
  it("refuses each swallowing combinator with no reason beside it, naming it and what to write", () => {
    const found = lint(
      [
        `const a = read.pipe(Effect.orElseSucceed(() => []))`,
        `const b = read.pipe(Effect.catchAll(() => Effect.succeed(0)))`,
        `const c = Effect.catchAllCause(read, () => Effect.void)`,
        `const d = Effect.orElse(read, () => other)`,
        `const e = write.pipe(Effect.ignore)`
      ].join("\n")
    )
    expect(found).toHaveLength(5)
    expect(found[0]).toMatch(/^1: Effect\.orElseSucceed turns a failure into a value: say why .*`\/\/ display: <why>`.*`\/\/ fallback: <why>`.*catchTag/)
    expect(found.map((f) => f.split(":")[0])).toEqual(["1", "2", "3", "4", "5"])
  })

  it("passes a use with its reason on the same line or in the comments right above it", () => {
    expect(
      lint(
        [
          `const a = read.pipe(Effect.orElseSucceed(() => [])) // display: the page lists nothing when it cannot read`,
          `// fallback: best-effort removal of a scratch file`,
          `const b = remove.pipe(Effect.ignore)`,
          `// fallback: a detached HEAD has no branch name`,
          `// @effect-diagnostics-next-line effectSucceedWithVoid:off -- why`,
          `const c = head.pipe(Effect.orElseSucceed(() => ""))`
        ].join("\n")
      )
    ).toEqual([])
  })

  it("refuses a reason that is empty, or a comment that is not the line above", () => {
    const found = lint(
      [`// fallback:`, `const a = read.pipe(Effect.ignore)`, `// display: far away`, `const x = 1`, `const b = read.pipe(Effect.ignore)`].join("\n")
    )
    expect(found).toEqual([
      "2: the `fallback:` comment above Effect.ignore gives no reason: say why in a few words",
      expect.stringMatching(/^5: Effect\.ignore turns a failure into a value/)
    ])
  })

  it("leaves catchTag, catchIf and anything not on Effect alone", () => {
    expect(
      lint(`const a = read.pipe(Effect.catchTag("RecordNotFound", () => Effect.succeed(null)), Stream.catchAll(() => Stream.empty), Option.orElse(() => b))`)
    ).toEqual([])
  })
})
