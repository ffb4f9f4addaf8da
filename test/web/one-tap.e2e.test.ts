/**
 * One tap from the lock screen, as real processes: `magi ask` publishes to
 * a stand-in ntfy on 127.0.0.1, the test presses a button the way the ntfy
 * app does (the published action's method, URL, headers and body), and the
 * waiting `magi ask` prints the answer. Capability tokens that are forged,
 * replayed, expired, for another question or choice, for a changed choice
 * set, or malformed are refused with nothing written; a press racing the
 * page has exactly one winner. On both store backends.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import * as AnswerLinks from "../../src/questions/AnswerLinks.js"
import { owner, storeBackends } from "../cli/cliSupport.js"
import { press, standInNtfy, tokenOf, writeNtfyConfig } from "./ntfy-support.js"
import { postJson, request, startWeb } from "./web-support.js"

type Owner = Awaited<ReturnType<(typeof storeBackends)[number]["owner"]>>

const NTFY_TOKEN = "tk_stand_in_0123456789"

/** An owner with a stand-in ntfy, `magi web` on their home and store, and the config pointing both at each other. */
const oneTapOwner = async (makeOwner: () => Promise<Owner>) => {
  const o = await makeOwner()
  const ntfy = await standInNtfy()
  const web = await startWeb(o.home, 0, { env: o.env, cwd: o.cwd })
  writeNtfyConfig(o.env.XDG_CONFIG_HOME!, ntfy.url, web.url)
  onTestFinished(async () => {
    await web.stop()
    await ntfy.close()
  })
  const asked: Array<ReturnType<Owner["start"]>> = []
  onTestFinished(() => {
    for (const a of asked) a.child.kill("SIGKILL")
  })
  const seen = new Set<string>()
  /**
   * `magi ask` with these choices, left waiting; its id once filed. Ids
   * sort by second and then a random part, so the new one is the one not
   * seen before, not the last in order.
   */
  const ask = async (summary: string, choices: ReadonlyArray<string>, count: number) => {
    const process = o.start(["ask", "--summary", summary, ...choices.flatMap((c) => ["--choice", c])], { NTFY_TOKEN })
    asked.push(process)
    const id = (await o.filedId(count)).find((i) => !seen.has(i))!
    seen.add(id)
    return { process, id }
  }
  const answerUrl = `${web.url}/api/answer-by-token`
  /** POST a token as a button would. */
  const pressToken = (token: string) => postJson(answerUrl, { token })
  const secret = () => Effect.runPromise(AnswerLinks.secretShared(o.home, Option.fromNullable(o.env.MAGI_STORE_URL)).pipe(Effect.provide(NodeFileSystem.layer)))
  return { o, ntfy, web, ask, pressToken, answerUrl, secret }
}

/** Flip one character of the token's part `part` (0 version, 1 payload, 2 mac). */
const alter = (token: string, part: number) => {
  const parts = token.split(".")
  const p = parts[part]!
  parts[part] = (p[0] === "A" ? "B" : "A") + p.slice(1)
  return parts.join(".")
}

/** A token's payload rewritten (the mac left as it was), as a forger with no key would. */
const rewritePayload = (token: string, change: (payload: Record<string, unknown>) => Record<string, unknown>) => {
  const [v, payload, mac] = token.split(".") as [string, string, string]
  const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
  return `${v}.${Buffer.from(JSON.stringify(change(decoded))).toString("base64url")}.${mac}`
}

for (const backend of storeBackends)
  describe(`one-tap answers, records in ${backend.name}`, { timeout: 180_000 }, () => {
    it("publishes the question to ntfy with a button per choice, and a press answers the waiting magi ask", async () => {
      const t = await oneTapOwner(backend.owner)
      const { process, id } = await t.ask("Ship the release?", ["Ship it", "Hold"], 1)
      const published = await t.ntfy.nth(1)

      expect(published.headers["authorization"]).toBe(`Bearer ${NTFY_TOKEN}`)
      expect(published.headers["content-type"]).toMatch(/^application\/json/)
      expect(published.message).toMatchObject({
        topic: "magi-one-tap-test",
        message: "Ship the release?\n\n1. Ship it\n2. Hold",
        priority: 4,
        click: `${t.web.url}/#/questions/${encodeURIComponent(id)}`
      })
      expect(published.message.actions?.map((a) => [a.action, a.label])).toEqual([["http", "Ship it"], ["http", "Hold"]])
      for (const action of published.message.actions ?? [])
        expect(action).toMatchObject({ url: t.answerUrl, method: "POST", headers: { "content-type": "application/json" } })

      const pressed = await press(published.message, "Hold")
      expect(pressed.status).toBe(200)
      expect(pressed.json()).toMatchObject({ answered: "Hold" })
      const done = await process.done
      expect(done.code).toBe(0)
      expect(done.stdout).toBe("Hold\n")

      // Shown like any other answer, saying how it came: on the page and at the terminal.
      const view = (await request(`${t.web.url}/api/questions/${id}`)).json() as { status: string; answer: unknown; answered_via?: string }
      expect(view).toMatchObject({ status: "answered", answer: { choice: "Hold" }, answered_via: "link" })
      const shown = await t.o.run(["answer", id])
      expect(shown.stdout).toContain("answer: Hold by a notification button")
      const listed = await t.o.run(["answer", "--list", "--all"])
      expect(listed.stdout).toContain("[answered by a notification button]")

      // The token is in no log and no page.
      const token = tokenOf(published.message, "Hold")
      expect(t.web.stderr()).not.toContain(token)
      expect(done.stderr).not.toContain(token)
      expect((await request(`${t.web.url}/api/questions/${id}`)).text).not.toContain(token)
    })

    it("refuses forged, replayed, expired, wrong-question, wrong-choice, changed-choice and malformed tokens, writing nothing", async () => {
      const t = await oneTapOwner(backend.owner)
      const first = await t.ask("Which region?", ["eu", "us"], 1)
      const other = await t.ask("Which size?", ["small", "large"], 2)
      await t.ntfy.nth(2)
      const ofQuestion = (id: string) => t.ntfy.published.find((p) => p.message.click?.endsWith(encodeURIComponent(id)))!.message
      const eu = tokenOf(ofQuestion(first.id), "eu")
      const small = tokenOf(ofQuestion(other.id), "small")
      const before = { first: t.o.read(first.id), other: t.o.read(other.id) }
      const nothingWritten = () => {
        expect(t.o.read(first.id)).toEqual(before.first)
        expect(t.o.read(other.id)).toEqual(before.other)
      }
      const refused = async (token: string, status: number, words: RegExp) => {
        const reply = await t.pressToken(token)
        expect(reply.status, `${token.slice(0, 12)}… → ${reply.text}`).toBe(status)
        expect((reply.json() as { error: string }).error).toMatch(words)
        const mac = token.split(".")[2] ?? ""
        if (mac.length >= 8) expect(reply.text).not.toContain(mac)
        nothingWritten()
      }

      const secret = await t.secret()
      // Forged: made with another key, or altered anywhere.
      const elsewhere = AnswerLinks.mint(NodeCrypto.randomBytes(32), { question: first.id, choices: ["eu", "us"], index: 0, expiresAt: Date.now() + 3_600_000 })
      await refused(elsewhere, 403, /not made by this magi/)
      await refused(alter(eu, 2), 403, /not made by this magi/)
      // Wrong question: `eu`'s token pointed at the other question.
      await refused(rewritePayload(eu, (p) => ({ ...p, q: other.id })), 403, /not made by this magi/)
      // Wrong choice: `eu`'s token pointed at `us`.
      await refused(rewritePayload(eu, (p) => ({ ...p, i: 1 })), 403, /not made by this magi/)
      // A choice past the end of the set, even signed with the right key.
      await refused(
        AnswerLinks.mint(secret, { question: first.id, choices: ["eu", "us"], index: 2, expiresAt: Date.now() + 3_600_000 }),
        409,
        /choices .* changed/
      )
      // Expired: the right key, a deadline passed.
      await refused(AnswerLinks.mint(secret, { question: first.id, choices: ["eu", "us"], index: 0, expiresAt: Date.now() - 1000 }), 410, /expired/)
      // Malformed.
      for (const junk of ["", "garbage", "v1.x.y", "v2.a.b", `v1.${"A".repeat(5000)}.${"B".repeat(43)}`, "v1..", "v1.e30." + "A".repeat(43)])
        await refused(junk, 403, /not one magi made|not made by this magi/)
      const notJson = await request(t.answerUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{token:" })
      expect(notJson.status).toBe(400)
      nothingWritten()

      // Changed choices: the agent replies with a new set; the old buttons no longer answer.
      const reply = t.o.start(["ask", "--thread", first.id, "--summary", "Only these two now", "--choice", "ap", "--choice", "eu"], { NTFY_TOKEN })
      onTestFinished(() => void reply.child.kill("SIGKILL"))
      await t.o.until(() => (t.o.read(first.id) as { choices: string[] }).choices[0] === "ap", "the reply's new choices")
      before.first = t.o.read(first.id)
      await refused(eu, 409, /choices of question .* changed/)

      // Replayed: the first press answers, the second says what the answer is.
      const pressed = await t.pressToken(small)
      expect(pressed.status).toBe(200)
      expect((await other.process.done).stdout).toBe("small\n")
      const once = t.o.read(other.id)
      expect(once).toMatchObject({ status: "answered", answer: { choice: "small" }, answered_via: "link" })
      const again = await t.pressToken(small)
      expect(again.status).toBe(409)
      expect(again.json()).toEqual({ error: "already answered: small" })
      expect(t.o.read(other.id)).toEqual(once)
    })

    it("a press racing an answer from the page has exactly one winner, and the asker prints it", async () => {
      const t = await oneTapOwner(backend.owner)
      for (let round = 1; round <= 3; round++) {
        const { process, id } = await t.ask(`Round ${round}: merge?`, ["merge", "wait"], round)
        const published = await t.ntfy.nth(round)
        const [fromButton, fromPage] = await Promise.all([
          press(published.message, "merge"),
          postJson(`${t.web.url}/api/questions/${id}/answer`, { choice: "wait" }, { origin: t.web.url })
        ])
        const statuses = [fromButton.status, fromPage.status].sort()
        expect(statuses).toEqual([200, 409])
        const winner = fromButton.status === 200 ? "merge" : "wait"
        const record = t.o.read(id) as { answer: { choice: string }; answered_via?: string }
        expect(record.answer.choice).toBe(winner)
        expect(record.answered_via).toBe(fromButton.status === 200 ? "link" : undefined)
        if (fromButton.status === 409) expect(fromButton.json()).toEqual({ error: "already answered: wait" })
        expect((await process.done).stdout).toBe(`${winner}\n`)
      }
    })
  })

describe("one-tap answers across machines sharing PostgreSQL", { timeout: 180_000 }, () => {
  it("a button sent by an asker on one machine is taken by magi web on another: the key is the database's, not a home's", async () => {
    const phoneSide = await oneTapOwner(storeBackends[1]!.owner)
    // Another machine: a home of its own on the same database, its config pointing at the same ntfy and page.
    const agentSide = owner({ storeUrl: phoneSide.o.env.MAGI_STORE_URL! })
    writeNtfyConfig(agentSide.env.XDG_CONFIG_HOME!, phoneSide.ntfy.url, phoneSide.web.url)
    const asking = agentSide.start(["ask", "--summary", "Deploy from the build box?", "--choice", "Deploy", "--choice", "Wait"], { NTFY_TOKEN })
    onTestFinished(() => {
      asking.child.kill("SIGKILL")
    })
    const published = await phoneSide.ntfy.nth(1)
    const pressed = await press(published.message, "Deploy")
    expect(pressed.status).toBe(200)
    const done = await asking.done
    expect(done.stdout).toBe("Deploy\n")
    // Neither home holds a key file: one key for the installation, in the database.
    expect(NodeFs.existsSync(NodePath.join(agentSide.home, AnswerLinks.SECRET_FILE))).toBe(false)
    expect(NodeFs.existsSync(NodePath.join(phoneSide.o.home, AnswerLinks.SECRET_FILE))).toBe(false)
  })
})

describe("an asker that cannot reach ntfy", { timeout: 180_000 }, () => {
  it("is stood in for by the loop, which publishes once, with buttons that answer the still-waiting magi ask", async () => {
    const o = await storeBackends[0]!.owner()
    const ntfy = await standInNtfy()
    onTestFinished(() => ntfy.close())
    // The loop's config reaches the stand-in; the asker's names a port nothing listens on (a sandbox with no network).
    const publicUrl = "http://127.0.0.1:1"
    writeNtfyConfig(o.env.XDG_CONFIG_HOME!, ntfy.url, publicUrl)
    const sandboxed = NodePath.join(o.top, "sandbox-config")
    writeNtfyConfig(sandboxed, "http://127.0.0.1:9", publicUrl)
    const web = await startWeb(o.home, 0, { env: o.env, cwd: o.cwd, loop: true })
    onTestFinished(async () => void (await web.stop()))
    const ask = o.start(["ask", "--summary", "Rebase or merge?", "--choice", "rebase", "--choice", "merge"], { XDG_CONFIG_HOME: sandboxed })
    onTestFinished(() => void ask.child.kill("SIGKILL"))
    const [id] = await o.filedId()
    const published = await ntfy.nth(1, 120_000)
    expect(published.message.click).toBe(`${publicUrl}/#/questions/${encodeURIComponent(id!)}`)
    // The buttons point at public_url; pressed here at the server's own address, as a proxy would forward them.
    const action = published.message.actions!.find((a) => a.label === "merge")!
    expect(action.action).toBe("http")
    const pressed = await request(action.url.replace(publicUrl, web.url), {
      method: "POST",
      headers: { ...(action as { headers: Record<string, string> }).headers },
      body: (action as { body: string }).body
    })
    expect(pressed.status).toBe(200)
    expect((await ask.done).stdout).toBe("merge\n")
    expect(ask.stderr()).toContain("could not notify about question")
    // A few of the loop's ticks later, still the one publication.
    await new Promise((r) => setTimeout(r, 3_000))
    expect(ntfy.published).toHaveLength(1)
  })
})

describe("a capability link opened in a browser", { timeout: 120_000 }, () => {
  it("shows what it would answer and answers nothing on GET; its confirm button answers once", async () => {
    const t = await oneTapOwner(storeBackends[0]!.owner)
    const { process, id } = await t.ask("Delete the old branch?", ["delete", "keep"], 1)
    const token = tokenOf((await t.ntfy.nth(1)).message, "keep")
    const link = `${t.answerUrl}?token=${encodeURIComponent(token)}`

    const shown = await request(link)
    expect(shown.status).toBe(200)
    expect(shown.headers["content-type"]).toMatch(/^text\/html/)
    expect(shown.headers["referrer-policy"]).toBe("no-referrer")
    expect(shown.headers["content-security-policy"]).toContain("default-src 'none'")
    expect(shown.text).toContain("Delete the old branch?")
    expect(shown.text).toContain("Answer: keep")
    expect(shown.text).not.toContain(token)
    expect(t.o.read(id)).toMatchObject({ status: "open" })

    // The page's form: a plain form post back to the same address, from the page's own origin.
    const confirmed = await request(link, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: t.web.url, "sec-fetch-site": "same-origin" },
      body: ""
    })
    expect(confirmed.status).toBe(200)
    expect(confirmed.text).toContain("answered: keep")
    expect((await process.done).stdout).toBe("keep\n")
    const later = await request(link)
    expect(later.status).toBe(409)
    expect(later.text).toContain("already answered: keep")

    // Every other route still refuses a form post: the token route is the one exemption.
    const forged = await request(`${t.web.url}/api/questions/${id}/say`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "body=hi"
    })
    expect(forged.status).toBe(403)
  })

  it("magi notify --test publishes a sample to ntfy and says where it went", async () => {
    const t = await oneTapOwner(storeBackends[0]!.owner)
    const done = await t.o.run(["notify", "--test"], { NTFY_TOKEN })
    expect(done.code).toBe(0)
    // The topic is the ntfy channel's password: only its first characters and length are printed.
    expect(done.stdout).toBe(`notifying: ntfy topic mag… (17 characters) at ${t.ntfy.url}\nthe notification went out\n`)
    const sample = await t.ntfy.nth(1)
    expect(sample.message.message).toBe("magi test notification: if you see this, notifications work")
    expect(sample.message.actions?.map((a) => a.label)).toEqual(["Open"])
    expect(sample.headers["authorization"]).toBe(`Bearer ${NTFY_TOKEN}`)
  })

  it("takes a button's press for the host of [web] public_url with no cookie, and still refuses any other host", async () => {
    const o = await storeBackends[0]!.owner()
    writeNtfyConfig(o.env.XDG_CONFIG_HOME!, "http://127.0.0.1:9", "https://magi.example.ts.net")
    const web = await startWeb(o.home, 0, { env: o.env, cwd: o.cwd })
    onTestFinished(async () => void (await web.stop()))
    const pressAs = (host: string) =>
      request(`${web.url}/api/answer-by-token`, { method: "POST", headers: { host, "content-type": "application/json" }, body: '{"token": "v1.a.b"}' })
    // The public name is this server's: no 421. An unpaired device may not read the page there,
    // but the token route needs no pairing: the token is judged (here: refused as not magi's).
    expect((await request(`${web.url}/api/health`, { headers: { host: "magi.example.ts.net" } })).status).not.toBe(421)
    const judged = await pressAs("magi.example.ts.net")
    expect(judged.status).toBe(403)
    expect(judged.json()).toEqual({ error: expect.stringMatching(/not one magi made/) })
    const confirmPage = await request(`${web.url}/api/answer-by-token?token=v1.a.b`, { headers: { host: "magi.example.ts.net" } })
    expect(confirmPage.status).toBe(403)
    expect(confirmPage.text).toContain("not one magi made")
    // Any other host is refused before any route runs, the token route included.
    expect((await request(`${web.url}/api/health`, { headers: { host: "evil.example" } })).status).toBe(421)
    expect((await pressAs("evil.example")).status).toBe(421)
  })

  it("keeps the key in the home, readable by the owner alone", async () => {
    const t = await oneTapOwner(storeBackends[0]!.owner)
    await t.ask("Key?", ["a", "b"], 1)
    await t.ntfy.nth(1)
    const key = NodePath.join(t.o.home, AnswerLinks.SECRET_FILE)
    expect(NodeFs.statSync(key).mode & 0o777).toBe(0o600)
    expect(NodeFs.readFileSync(key, "utf8")).toMatch(/^[0-9a-f]{64}\n$/)
  })
})
