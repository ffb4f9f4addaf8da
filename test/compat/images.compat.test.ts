/**
 * An image the owner attached reaches each pinned real CLI's model request
 * (issue 32.4), the way that CLI takes images (docs/agents/<cli>.md):
 * claude's stream-json user message with a base64 image block, codex's
 * `-i FILE`, opencode's `-f FILE`. Each CLI runs two turns through magi's
 * own adapter (`Agents.call`): a new session with one PNG, then the same
 * session resumed with another; its model stand-in records every request,
 * and the test finds each PNG's own bytes, base64, in the CLI's image part
 * of that turn's request (and the first image not in the second turn's new
 * message: each turn carries its own). Then the whole way on codex, the
 * quickest to start: `magi say --image` to a finished run, and `magi
 * serve`'s loop resumes the seat with the image in its model request.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeZlib from "node:zlib"
import { describe, expect, it } from "vitest"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, type CallResult, newSeat, type SeatState } from "../../src/agents/Agents.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"
import { until } from "../support.js"
import { afterTest, need, runMagi, scratchDir, startMagi } from "./processes.js"
import { claudeEnv, startAnthropic } from "./standins/anthropic.js"
import { startOpenAiChat } from "./standins/openai-chat.js"
import { codexConfig, startResponsesStandIn } from "./standins/openai-responses.js"

const TURN_MS = 180_000

// ---------------------------------------------------------------------------
// Two small, real PNGs (a decoder must take them: codex reads and may
// resize what it sends), told apart by their colour.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (b: Buffer) => {
  let c = 0xffffffff
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type: string, data: Buffer) => {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([len, body, crc])
}
/** A `size`×`size` RGB PNG of one colour. */
const png = (size: number, rgb: readonly [number, number, number]): Buffer => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())])
  const raw = Buffer.concat(Array.from({ length: size }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", NodeZlib.deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0))
  ])
}
const RED = png(8, [220, 20, 20])
const BLUE = png(8, [20, 20, 220])

/** A `size`×`size` PNG of random pixels, stored uncompressed: 1500 gives 6.75 MB, near the 8 MiB cap. */
const noise = (size: number): Buffer => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const raw = Buffer.alloc((size * 3 + 1) * size)
  for (let i = 0; i < raw.length; i++) raw[i] = i % (size * 3 + 1) === 0 ? 0 : (Math.random() * 256) | 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", NodeZlib.deflateSync(raw, { level: 0 })),
    chunk("IEND", Buffer.alloc(0))
  ])
}

// ---------------------------------------------------------------------------

const call = (home: string, input: CallInput): Promise<CallResult> =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* (yield* Agents).call(input)
    }).pipe(Effect.provide(Agents.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provideMerge(NodeContext.layer))))
  )

interface Setup {
  readonly dir: string
  readonly work: string
  readonly images: { readonly red: string; readonly blue: string }
}

/** `home`: the name of magi's home folder, where the worktree and the run's images both are. */
const setup = (prefix: string, home = "magi-home"): Setup => {
  const dir = scratchDir(prefix)
  const work = NodePath.join(dir, home, "worktrees", "r1")
  NodeFs.mkdirSync(work, { recursive: true })
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: work })
  NodeFs.writeFileSync(NodePath.join(work, "README.md"), "# images\n")
  // Where magi keeps a run's images: outside the worktree.
  const assets = NodePath.join(dir, home, "runs", "R1", "images")
  NodeFs.mkdirSync(assets, { recursive: true })
  const red = NodePath.join(assets, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png")
  const blue = NodePath.join(assets, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.png")
  NodeFs.writeFileSync(red, RED)
  NodeFs.writeFileSync(blue, BLUE)
  return { dir, work, images: { red, blue } }
}

const turn = (s: Setup, agent: AgentSpec, seat: SeatState, n: number, image: string): Promise<CallResult> =>
  call(NodePath.join(s.dir, "magi-home"), {
    agent,
    seat,
    prompt: `Turn ${n}: what colour is the attached screenshot?\n\nAttached image (given to you with this message; each is also this file):\n- ${image}`,
    cwd: s.work,
    allowWrite: true,
    timeout: Duration.millis(TURN_MS),
    artifactsDir: NodePath.join(s.dir, "artifacts"),
    stem: `impl-${n}`,
    run: "R1",
    node: "implement",
    images: [image]
  })

const ok = (r: CallResult) => {
  const said = `${NodeFs.readFileSync(r.stdoutFile, "utf8")}\n${NodeFs.readFileSync(r.stderrFile, "utf8")}`
  expect(r.usable, said).toBe(true)
  expect(r.text).toBe("A coloured square.")
}

const b64 = (b: Buffer) => b.toString("base64")

/** Every string anywhere in `v` that holds `needle`. */
const holding = (v: unknown, needle: string): string[] =>
  typeof v === "string"
    ? (v.includes(needle) ? [v] : [])
    : Array.isArray(v)
    ? v.flatMap((x) => holding(x, needle))
    : typeof v === "object" && v !== null
    ? Object.values(v).flatMap((x) => holding(x, needle))
    : []

describe("an attached image reaches each real CLI's model request", () => {
  it("claude: a base64 image block in the user message it reads as stream-json, new and resumed", async () => {
    const claude = need("claude")
    const s = setup("images-claude-")
    const api = await startAnthropic(() => ({ text: "A coloured square." }))
    afterTest(() => api.close())
    const claudeHome = NodePath.join(s.dir, "claude-home")
    NodeFs.mkdirSync(claudeHome)
    const agent: AgentSpec = {
      id: "claude",
      kind: "claude",
      command: [claude],
      model: null,
      args: [],
      env: { ...claudeEnv(api.url, claudeHome), IS_SANDBOX: "1" }
    }

    const first = await turn(s, agent, newSeat("impl", "claude"), 1, s.images.red)
    ok(first)
    const second = await turn(s, agent, first.seat, 2, s.images.blue)
    ok(second)
    expect(second.seat.session).toBe(first.seat.session)

    const [one, two] = api.turns()
    const imagesOf = (m: unknown) =>
      (Array.isArray((m as { content?: unknown }).content) ? ((m as { content: Array<Record<string, any>> }).content) : []).filter((b) => b.type === "image")
    // Turn 1's request: its one user message holds the red PNG as is.
    const firstUser = one!.body!.messages.filter((m) => m.role === "user").at(-1)
    expect(imagesOf(firstUser)).toEqual([{ type: "image", source: { type: "base64", media_type: "image/png", data: b64(RED) } }])
    // Turn 2's request: the resumed conversation, its new user message with the blue one.
    const lastUser = two!.body!.messages.filter((m) => m.role === "user").at(-1)
    expect(imagesOf(lastUser)).toEqual([{ type: "image", source: { type: "base64", media_type: "image/png", data: b64(BLUE) } }])
    expect(JSON.stringify(two!.body)).toContain("Turn 1:")
    expect(api.requests.filter((q) => !q.path.startsWith("/v1/messages"))).toEqual([])
  }, 2 * TURN_MS + 60_000)

  it("codex: -i FILE gives an input_image of the user message, new and resumed", async () => {
    const codex = need("codex")
    const s = setup("images-codex-")
    const api = await startResponsesStandIn(() => ({ kind: "message", text: "A coloured square." }))
    afterTest(() => api.close())
    const codexHome = NodePath.join(s.dir, "codex-home")
    NodeFs.mkdirSync(codexHome)
    NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(api))
    const agent: AgentSpec = {
      id: "codex",
      kind: "codex",
      command: [codex],
      model: null,
      args: [],
      env: { ...api.proxyEnv, CODEX_HOME: codexHome, HOME: s.dir }
    }

    const first = await turn(s, agent, newSeat("impl", "codex"), 1, s.images.red)
    ok(first)
    const second = await turn(s, agent, first.seat, 2, s.images.blue)
    ok(second)
    expect(second.seat.session).toBe(first.seat.session)

    const userParts = (i: number) =>
      (api.requests[i]!.body.input ?? []).filter((x) => x.type === "message" && x.role === "user").at(-1)?.content as Array<Record<string, unknown>>
    const imagePart = (parts: Array<Record<string, unknown>>) => parts.filter((p) => p.type === "input_image")
    expect(api.requests.length).toBe(2)
    expect(imagePart(userParts(0))).toEqual([expect.objectContaining({ type: "input_image", image_url: `data:image/png;base64,${b64(RED)}` })])
    expect(imagePart(userParts(1))).toEqual([expect.objectContaining({ type: "input_image", image_url: `data:image/png;base64,${b64(BLUE)}` })])
    expect(JSON.stringify(api.requests[1]!.body)).toContain("Turn 1:")
    expect(api.escaped).toEqual([])
  }, 2 * TURN_MS + 60_000)

  it("codex: an image in a home whose path holds a comma (which -i splits at) still reaches it", async () => {
    const s = setup("images-comma-", "my,home")
    const { agent, images } = await against("codex", s)
    ok(await turn(s, agent, newSeat("impl", "codex"), 1, s.images.red))
    expect(images()).toEqual([{ type: "image/png", base64: b64(RED) }])
  }, TURN_MS + 60_000)

  it("opencode: -f FILE gives an image_url data part of the user message, new and resumed", async () => {
    const opencode = need("opencode")
    const s = setup("images-opencode-")
    const api = await startOpenAiChat(() => ({ text: "A coloured square." }))
    afterTest(() => api.close())
    const env = opencodeEnv(s.dir, "seat", api.baseUrl)
    // The model must say it reads images, as an image model's entry does
    // (models.dev's `attachment` and input modalities): opencode sends an
    // image to no other, and says so in the prompt instead.
    const configFile = NodePath.join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json")
    const config = JSON.parse(NodeFs.readFileSync(configFile, "utf8"))
    config.provider.standin.models.scripted = {
      ...config.provider.standin.models.scripted,
      attachment: true,
      modalities: { input: ["text", "image"], output: ["text"] }
    }
    NodeFs.writeFileSync(configFile, JSON.stringify(config))
    const agent: AgentSpec = { id: "oc", kind: "opencode", command: [opencode], model: MODEL, args: [], env }

    const first = await turn(s, agent, newSeat("impl", "oc"), 1, s.images.red)
    ok(first)
    const second = await turn(s, agent, first.seat, 2, s.images.blue)
    ok(second)
    expect(second.seat.session).toBe(first.seat.session)

    const agentTurns = api.requests.filter((r) => (r.tools?.length ?? 0) > 0)
    expect(agentTurns.length).toBe(2)
    const lastUser = (i: number) => agentTurns[i]!.messages.filter((m) => m.role === "user").at(-1)!.content
    expect(holding(lastUser(0), b64(RED))).toEqual([`data:image/png;base64,${b64(RED)}`])
    expect(holding(lastUser(1), b64(BLUE))).toEqual([`data:image/png;base64,${b64(BLUE)}`])
    expect(holding(lastUser(1), b64(RED))).toEqual([])
    expect(JSON.stringify(agentTurns[1])).toContain("Turn 1:")
    expect(api.escapes).toEqual([])
  }, 2 * TURN_MS + 60_000)
})

/** One CLI against its stand-in, and the image parts of its agent turns' requests as `{type, base64}`. */
const against = async (
  cli: "claude" | "codex" | "opencode",
  s: Setup
): Promise<{ agent: AgentSpec; images: () => Array<{ type: string; base64: string }> }> => {
  const dataUrls = (body: unknown) =>
    holding(body, ";base64,").flatMap((u) => {
      const m = /^data:(image\/[a-z]+);base64,(.*)$/s.exec(u)
      return m === null ? [] : [{ type: m[1]!, base64: m[2]! }]
    })
  if (cli === "claude") {
    const api = await startAnthropic(() => ({ text: "A coloured square." }))
    afterTest(() => api.close())
    const home = NodePath.join(s.dir, "claude-home")
    NodeFs.mkdirSync(home)
    return {
      agent: { id: "claude", kind: "claude", command: [need("claude")], model: null, args: [], env: { ...claudeEnv(api.url, home), IS_SANDBOX: "1" } },
      images: () =>
        api.turns().flatMap((r) =>
          r.body!.messages.flatMap((m) => typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "image"))
            .map((b) => ({ type: String((b as any).source.media_type), base64: String((b as any).source.data) }))
        )
    }
  }
  if (cli === "codex") {
    const api = await startResponsesStandIn(() => ({ kind: "message", text: "A coloured square." }))
    afterTest(() => api.close())
    const codexHome = NodePath.join(s.dir, "codex-home")
    NodeFs.mkdirSync(codexHome)
    NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(api))
    return {
      agent: { id: "codex", kind: "codex", command: [need("codex")], model: null, args: [], env: { ...api.proxyEnv, CODEX_HOME: codexHome, HOME: s.dir } },
      images: () => api.requests.flatMap((r) => dataUrls(r.body.input))
    }
  }
  const api = await startOpenAiChat(() => ({ text: "A coloured square." }))
  afterTest(() => api.close())
  const env = opencodeEnv(s.dir, "seat", api.baseUrl)
  const configFile = NodePath.join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json")
  const config = JSON.parse(NodeFs.readFileSync(configFile, "utf8"))
  config.provider.standin.models.scripted = {
    ...config.provider.standin.models.scripted,
    attachment: true,
    modalities: { input: ["text", "image"], output: ["text"] }
  }
  NodeFs.writeFileSync(configFile, JSON.stringify(config))
  return {
    agent: { id: "oc", kind: "opencode", command: [need("opencode")], model: MODEL, args: [], env },
    images: () => api.requests.filter((r) => (r.tools?.length ?? 0) > 0).flatMap((r) => dataUrls(r.messages))
  }
}

describe("an image near the 8 MiB cap reaches each real CLI (a 1500×1500 PNG of 6.75 MB)", () => {
  // Measured: codex sends the PNG's own bytes; claude and opencode each
  // re-encode it as a JPEG first (some 0.5 MB and 3.2 MB), as their own
  // reading of an image file does. Either way the model gets an image.
  const way = { claude: "a JPEG of it", codex: "its own bytes", opencode: "a JPEG of it" } as const
  for (const cli of ["claude", "codex", "opencode"] as const)
    it(`${cli}: ${way[cli]}`, async () => {
      const s = setup(`images-big-${cli}-`)
      const big = noise(1500)
      NodeFs.writeFileSync(s.images.red, big)
      const { agent, images } = await against(cli, s)
      ok(await turn(s, agent, newSeat("impl", agent.id), 1, s.images.red))
      const [sent, ...more] = images()
      expect(more).toEqual([])
      if (cli === "codex") expect(sent).toEqual({ type: "image/png", base64: b64(big) })
      else {
        expect(sent?.type).toBe("image/jpeg")
        const bytes = Buffer.from(sent!.base64, "base64")
        expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
        expect(bytes.length).toBeLessThan(big.length)
      }
    }, TURN_MS + 60_000)
})

describe("magi say --image, the whole way to a real CLI", () => {
  it("codex: the loop resumes the seat and the image's bytes are in that turn's model request", async () => {
    const codex = need("codex")
    const dir = scratchDir("images-say-")
    const api = await startResponsesStandIn(() => ({ kind: "message", text: "A coloured square." }))
    afterTest(() => api.close())
    const codexHome = NodePath.join(dir, "codex-home")
    const userHome = NodePath.join(dir, "user-home")
    const repo = NodePath.join(dir, "repo")
    for (const d of [codexHome, userHome, repo]) NodeFs.mkdirSync(d)
    NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(api))
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
    git("init", "-q", "-b", "trunk")
    git("config", "user.email", "owner@example.com")
    git("config", "user.name", "Owner")
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.codex]\nkind = "codex"\ncommand = ${JSON.stringify([codex])}\nmcp = false\nwait = "poll"\n\n[notify]\ncommand = ["true"]\n`
    )
    git("add", "-A")
    git("commit", "-q", "-m", "init")
    const home = NodePath.join(dir, "magi-home")
    const env = { ...api.proxyEnv, MAGI_HOME: home, HOME: userHome, CODEX_HOME: codexHome, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") }
    const magi = (...args: string[]) => runMagi(args, { cwd: repo, env, deadline: TURN_MS })

    const ran = await magi("run", "Make the page fit a phone.")
    expect(ran.code, ran.stderr).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs")).filter((f) => /^\d{8}-/.test(f))
    const record = () => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
    const shot = NodePath.join(dir, "shot.png")
    NodeFs.writeFileSync(shot, RED)
    const said = await magi("say", id!.split("-").at(-1)!, "--image", shot, "the button is cut off")
    expect(said.code, said.stderr).toBe(0)

    startMagi(["serve", "--home", home], { cwd: repo, env, deadline: TURN_MS })
    await until(
      "the seat's second turn ran",
      () => record().said?.[0]?.state === "delivered" && record().seats[0].turns === 2 && api.requests.length === 2,
      TURN_MS
    )
    const user = (api.requests[1]!.body.input ?? []).filter((x) => x.type === "message" && x.role === "user").at(-1)!
    const parts = user.content as ReadonlyArray<Record<string, unknown>>
    expect(parts.filter((p) => p.type === "input_image")).toEqual([expect.objectContaining({ image_url: `data:image/png;base64,${b64(RED)}` })])
    const text = parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("")
    expect(text).toContain("the button is cut off")
    expect(text).toContain("given to you with this message")
    expect(api.escaped).toEqual([])
  }, 2 * TURN_MS + 60_000)
})
