/**
 * Where `magi web` listens, and which names it answers to.
 *
 * The owner reads questions from a phone, usually over Tailscale, so `auto`
 * binds the machine's tailnet address: reachable from the owner's devices and
 * from nothing else. Without Tailscale it falls back to loopback, with a
 * warning, and never to 0.0.0.0: a question names code, runs and sometimes
 * secrets, and "every network this laptop joins" is not an audience anyone
 * chose. 0.0.0.0 is only ever used when the owner types it.
 */
import * as Command from "@effect/platform/Command"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import { Data, Duration, Effect, Option } from "effect"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"

/** `tailscale` answers from its local daemon; anything slower is not there. */
const TAILSCALE_TIMEOUT = Duration.seconds(3)

export class BadBind extends Data.TaggedError("BadBind")<{ readonly message: string }> {}

/** What `--bind` resolved to. */
export interface Binding {
  /** The address to listen on. */
  readonly address: string
  /**
   * Host names (without port) a request may carry in `Host`: the address
   * itself, `localhost`, the machine's Tailscale names. Anything else is a
   * browser that was pointed here by someone else's DNS (rebinding) and is
   * refused.
   */
  readonly hostNames: ReadonlyArray<string>
  /**
   * The address to put in the printed URL: the bound one, or for a wildcard
   * bind one a phone can actually reach (0.0.0.0 in a URL goes nowhere).
   */
  readonly urlAddress: string
  /** Why the address is not what the owner might expect, for stderr. */
  readonly warning: Option.Option<string>
}

/** Tailscale's shared address range, 100.64.0.0/10 (RFC 6598). */
export const inTailnetRange = (ip: string): boolean => {
  if (!NodeNet.isIPv4(ip)) return false
  const [a, b] = ip.split(".").map(Number) as [number, number]
  return a === 100 && b >= 64 && b <= 127
}

/** The first tailnet address in `tailscale ip -4` output. */
export const firstTailnetAddress = (output: string): Option.Option<string> =>
  Option.fromNullable(
    output
      .split(/\s+/)
      .map((l) => l.trim())
      .find(inTailnetRange)
  )

/** Run `tailscale …`, its stdout or none: absent, stopped and slow all mean "no tailnet". */
const tailscale = (...args: ReadonlyArray<string>) =>
  Command.make("tailscale", ...args).pipe(
    Command.string,
    Effect.timeout(TAILSCALE_TIMEOUT),
    Effect.option
  )

/** The machine's MagicDNS names (`host.tailnet.ts.net` and `host`), when Tailscale has them. */
const tailscaleNames: Effect.Effect<ReadonlyArray<string>, never, CommandExecutor> = Effect.map(
  tailscale("status", "--json"),
  (out) => {
    if (Option.isNone(out)) return []
    try {
      const self = (JSON.parse(out.value) as { Self?: { DNSName?: unknown; HostName?: unknown } }).Self
      const dns = typeof self?.DNSName === "string" ? self.DNSName.replace(/\.$/, "").toLowerCase() : ""
      const names = dns === "" ? [] : [dns, dns.split(".")[0]!]
      return names.filter((n) => n !== "")
    } catch {
      return []
    }
  }
)

/** Every address this machine has, for an explicit `--bind 0.0.0.0`. */
const allLocalAddresses = (): ReadonlyArray<string> =>
  Object.values(NodeOs.networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => i.address)

/** Resolve `--bind`: `auto`, or an IP address the owner chose. */
export const resolveBind = Effect.fn("resolveBind")(function* (bind: string) {
  const names = yield* tailscaleNames
  const wanted = bind.trim()
  let address: string
  let warning = Option.none<string>()
  if (wanted === "auto") {
    const found = Option.flatMap(yield* tailscale("ip", "-4"), firstTailnetAddress)
    if (Option.isSome(found)) address = found.value
    else {
      address = "127.0.0.1"
      warning = Option.some(
        "no Tailscale address found (`tailscale ip -4`), so magi web listens on 127.0.0.1 only: your phone cannot reach it. Start Tailscale, or pass --bind with an address you trust"
      )
    }
  } else if (NodeNet.isIP(wanted) !== 0) {
    address = wanted
  } else {
    return yield* new BadBind({
      message: `--bind takes \`auto\` or an IP address, not \`${bind}\` (a host name could resolve anywhere; say the address you mean)`
    })
  }
  const everywhere = address === "0.0.0.0" || address === "::"
  if (everywhere)
    warning = Option.some(
      `listening on every interface (${address}): anyone who can reach this machine can read and answer your questions`
    )
  const hostNames = new Set<string>(["localhost", address.toLowerCase(), ...names])
  if (everywhere) { for (const a of allLocalAddresses()) hostNames.add(a.toLowerCase()) }
  if (address === "127.0.0.1" || address === "::1") {
    hostNames.add("127.0.0.1")
    hostNames.add("::1")
  }
  const external = allLocalAddresses().filter((a) => NodeNet.isIPv4(a) && a !== "127.0.0.1")
  const urlAddress = everywhere ? (external.find(inTailnetRange) ?? external[0] ?? "127.0.0.1") : address
  return { address, hostNames: [...hostNames], urlAddress, warning } satisfies Binding
})

/** An address only this machine can reach: 127.0.0.0/8, ::1 (and the IPv4-mapped form of either), `localhost`. */
export const isLoopback = (address: string): boolean => {
  const a = address.trim().toLowerCase().replace(/^\[|\]$/g, "")
  if (a === "localhost" || a.endsWith(".localhost") || a === "::1") return true
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a
  return NodeNet.isIPv4(v4) && v4.startsWith("127.")
}

/** The host name of `[web] public_url`, lower-cased; undefined when it is not a URL. */
export const publicHostOf = (publicUrl: string | null | undefined): string | undefined => {
  if (publicUrl === null || publicUrl === undefined || publicUrl.trim() === "") return undefined
  try {
    return new URL(publicUrl).hostname.toLowerCase().replace(/^\[|\]$/g, "")
  } catch {
    return undefined
  }
}

/**
 * Must a device pair before it sees anything? Yes when the page can be
 * reached from beyond this machine: bound to an address that is not
 * loopback, or named by a public address that is not (a proxy such as
 * Tailscale's `serve` connects from 127.0.0.1, so a loopback peer proves
 * nothing about who is behind it). A loopback-only page with no public
 * address stays open, as it always was.
 */
export const reachableBeyondLoopback = (address: string, publicUrl: string | null | undefined): boolean => {
  if (!isLoopback(address)) return true
  const host = publicHostOf(publicUrl)
  return host !== undefined && !isLoopback(host)
}
