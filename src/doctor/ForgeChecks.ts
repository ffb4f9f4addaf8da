/**
 * `magi doctor`'s forge lines, for a repository whose `[graph] merge = "pr"`:
 * the token (which variable, or `gh auth token`, never the token itself),
 * what GitHub says it may do (`X-OAuth-Scopes` on `GET /user`; a
 * fine-grained token sends none, and is said to), and whether the push
 * remote's URL names a repository on the forge `[forge] api` serves. A
 * landing meets each of these only after a run is ready, hours in: here
 * they are met on the first day.
 *
 * The one network call is `GET /user`, with few retries and a short limit,
 * so a forge that is down costs the doctor seconds, not the land loop's
 * minutes of backoff.
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as FileSystem from "@effect/platform/FileSystem"
import { Duration, Effect, Either, Layer, Logger, LogLevel } from "effect"
import * as GraphConfig from "../graph/GraphConfig.js"
import { Forge } from "../land/Forge.js"
import * as ForgeConfig from "../land/ForgeConfig.js"
import { hostOfApi, parseRemote } from "../land/ForgeRemote.js"
import * as ForgeToken from "../land/ForgeToken.js"
import * as GitHubForge from "../land/GitHubForge.js"
import type * as Http from "../land/GitHubHttp.js"
import { git } from "../runs/Worktree.js"
import { type Check, fail, ok, warn } from "./Check.js"

/** One try and one retry, ten seconds each: a doctor answers in seconds, whatever the forge does. */
export const doctorHttp = (api: string): Http.HttpOptions => ({
  api,
  retryBase: Duration.millis(500),
  retries: 1,
  timeout: Duration.seconds(10),
  maxRateWait: Duration.seconds(5)
})

const FINE_GRAINED_NEEDS = "Contents, Pull requests and Issues: read and write; Checks, Commit statuses and Actions: read"

/** What the scopes a classic token reports mean for landing; a fine-grained one reports none. Pure. */
export const scopeCheck = (source: string, scopes: ReadonlyArray<string> | null): Check => {
  const name = "forge: token scopes"
  if (scopes === null || scopes.length === 0)
    return ok(
      name,
      `the token from ${source} reports no scopes (a fine-grained or Actions token): GitHub says what it lacks only when it refuses; it needs ${FINE_GRAINED_NEEDS} on the repository`
    )
  if (!scopes.includes("repo"))
    return fail(
      name,
      `the token from ${source} has ${scopes.join(", ")}, without repo: magi cannot push, open or merge a pull request`,
      "give the token the repo scope (or use a fine-grained token with the permissions in docs/forge.md)"
    )
  if (!scopes.includes("workflow"))
    return warn(
      name,
      `the token from ${source} has ${scopes.join(", ")}, without workflow`,
      "add the workflow scope if a fix may touch .github/workflows (GitHub refuses that push without it)"
    )
  return ok(name, `the token from ${source} has ${scopes.join(", ")}`)
}

/** The push remote's URL against the configured forge. Pure. */
export const remoteCheck = (remote: string, url: string, api: string): Check => {
  const name = `forge: remote ${remote}`
  if (url === "")
    return fail(name, `the repository has no remote ${remote}`, `add it (git remote add ${remote} https://github.com/OWNER/REPO.git), or set [graph] remote`)
  const parsed = parseRemote(url)
  const host = hostOfApi(api)
  if (parsed === null)
    return fail(name, `${url} names no repository on a forge`, `point ${remote} at the repository on ${host ?? api}, or set [graph] remote`)
  if (parsed.host !== host)
    return fail(
      name,
      `${url} is on ${parsed.host}, but [forge] api ${api} serves ${host ?? "no host"}`,
      parsed.host === "github.com"
        ? "remove [forge] api (it defaults to https://api.github.com)"
        : `set [forge] api to ${parsed.host}'s API (https://${parsed.host}/api/v3 for GitHub Enterprise)`
    )
  return ok(name, `${parsed.owner}/${parsed.name} on ${parsed.host}, the forge [forge] api serves`)
}

/**
 * The forge lines for `repo`, none when it does not land through pull
 * requests. A config that does not read is the config check's to report.
 */
export const forgeChecks = (
  repo: string,
  env: Record<string, string | undefined>,
  http: (api: string) => Http.HttpOptions = doctorHttp
): Effect.Effect<ReadonlyArray<Check>, never, CommandExecutor.CommandExecutor | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const graph = yield* Effect.either(GraphConfig.load(repo))
    if (Either.isLeft(graph) || graph.right.landing.merge !== "pr") return []
    const remote = graph.right.landing.remote
    const forge = yield* Effect.either(ForgeConfig.load(repo))
    if (Either.isLeft(forge)) return [fail("forge: api", forge.left.message, "fix [forge] api (docs/forge.md)")]
    const api = forge.right.api
    const checks: Check[] = [ok("forge: api", api)]
    // display: a doctor check: no URL read is reported as no such remote
    const url = yield* git(repo, "config", "--get", `remote.${remote}.url`).pipe(Effect.orElseSucceed(() => ""))
    checks.push(remoteCheck(remote, url.trim(), api))
    const token = yield* Effect.either(ForgeToken.resolve(env))
    if (Either.isLeft(token)) {
      checks.push(fail("forge: token", token.left.message, "export GH_TOKEN (a token with repo), or `gh auth login`"))
      return checks
    }
    const grant = yield* Effect.flatMap(Forge, (f) => f.grant).pipe(
      Effect.provide(GitHubForge.layer(http(api), env).pipe(Layer.provide(FetchHttpClient.layer))),
      // Each retry's warning is the land loop's to log; here the one line below says how it ended.
      Logger.withMinimumLogLevel(LogLevel.Error),
      Effect.either
    )
    if (Either.isLeft(grant)) {
      checks.push(
        fail(
          "forge: token",
          `found in ${token.right.source}, but ${grant.left.message}`,
          grant.left._tag === "ForgeAuthError" ? `replace the token in ${token.right.source}` : `check that ${api} is reachable from this machine`
        )
      )
      return checks
    }
    checks.push(ok("forge: token", `from ${grant.right.source}, signed in as ${grant.right.login || "(no login)"}`))
    checks.push(scopeCheck(grant.right.source, grant.right.scopes))
    return checks
  })
