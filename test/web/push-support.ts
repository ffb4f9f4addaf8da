/**
 * A stand-in push service on 127.0.0.1, and a phone's side of Web Push made
 * with node:crypto alone: the keys a browser subscribes with, and the
 * decryption (RFC 8291 over RFC 8188's aes128gcm) and VAPID check (RFC 8292)
 * a push service and a phone do. Written from the RFCs, not with the
 * `web-push` library magi encrypts with, so a mistake on either side shows.
 */
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

const b64url = (bytes: Buffer) => bytes.toString("base64url")

const hmac = (key: Buffer, data: Buffer) => NodeCrypto.createHmac("sha256", key).update(data).digest()

/** A browser's subscription keys: its P-256 pair and auth secret. */
export interface Phone {
  readonly p256dh: string
  readonly auth: string
  /** The plaintext of an aes128gcm body encrypted to this phone. */
  readonly decrypt: (body: Buffer) => string
}

export const phoneKeys = (): Phone => {
  const ecdh = NodeCrypto.createECDH("prime256v1")
  const uaPublic = ecdh.generateKeys()
  const authSecret = NodeCrypto.randomBytes(16)
  const decrypt = (body: Buffer): string => {
    // RFC 8188 §2.1: salt (16) | rs (4) | idlen (1) | keyid (idlen) | records.
    const salt = body.subarray(0, 16)
    const rs = body.readUInt32BE(16)
    const idlen = body[20]!
    const asPublic = body.subarray(21, 21 + idlen)
    const ciphertext = body.subarray(21 + idlen)
    if (idlen !== 65) throw new Error(`the keyid is ${idlen} bytes, not the sender's 65-byte public key`)
    if (ciphertext.length > rs) throw new Error("more than one record: a push payload fits one")
    // RFC 8291 §3.4: the key combines the ECDH secret with the auth secret.
    const ecdhSecret = ecdh.computeSecret(asPublic)
    const prkKey = hmac(authSecret, ecdhSecret)
    const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), uaPublic, asPublic])
    const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])]))
    // RFC 8188 §2.2/2.3: the content key and nonce from the salt.
    const prk = hmac(salt, ikm)
    const cek = hmac(prk, Buffer.from("Content-Encoding: aes128gcm\0\x01")).subarray(0, 16)
    const nonce = hmac(prk, Buffer.from("Content-Encoding: nonce\0\x01")).subarray(0, 12)
    const decipher = NodeCrypto.createDecipheriv("aes-128-gcm", cek, nonce)
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
    const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
    // The last record ends with the delimiter 0x02 then zero padding.
    let end = padded.length - 1
    while (end >= 0 && padded[end] === 0) end--
    if (padded[end] !== 2) throw new Error("no last-record delimiter")
    return padded.subarray(0, end).toString("utf8")
  }
  return { p256dh: b64url(uaPublic), auth: b64url(authSecret), decrypt }
}

export interface Received {
  readonly path: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: Buffer
}

export interface VapidClaims {
  readonly aud: string
  readonly exp: number
  readonly sub: string
  /** The key the JWT was signed with (`k=` in the header), base64url. */
  readonly key: string
}

/**
 * Check a push's `Authorization: vapid t=<jwt>, k=<key>` as a push service
 * does: an ES256 signature by `k` over the JWT, for this service's origin.
 */
export const vapidClaims = (received: Received, serviceOrigin: string): VapidClaims => {
  const header = String(received.headers["authorization"] ?? "")
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header)
  if (m === null) throw new Error(`not a VAPID authorization: ${header}`)
  const [, jwt, key] = m as unknown as [string, string, string]
  const [h, p, s] = jwt.split(".") as [string, string, string]
  const head = JSON.parse(Buffer.from(h, "base64url").toString("utf8")) as { alg: string }
  if (head.alg !== "ES256") throw new Error(`JWT alg ${head.alg}`)
  const point = Buffer.from(key, "base64url")
  const publicKey = NodeCrypto.createPublicKey({
    key: { kty: "EC", crv: "P-256", x: b64url(point.subarray(1, 33)), y: b64url(point.subarray(33, 65)) },
    format: "jwk"
  })
  const good = NodeCrypto.verify("sha256", Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: "ieee-p1363" }, Buffer.from(s, "base64url"))
  if (!good) throw new Error("the VAPID JWT's signature does not verify with its k")
  const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as { aud: string; exp: number; sub: string }
  if (claims.aud !== serviceOrigin) throw new Error(`the JWT is for ${claims.aud}, not ${serviceOrigin}`)
  return { ...claims, key }
}

export interface PushService {
  /** The origin, as a JWT's `aud` names it. */
  readonly origin: string
  /** A new endpoint on this service; pushes to it are answered `status`. */
  readonly endpoint: (name: string, status?: number) => string
  readonly received: Array<Received>
  /** Resolves once `n` pushes reached `name`'s endpoint. */
  readonly waitFor: (name: string, n?: number, timeoutMs?: number) => Promise<ReadonlyArray<Received>>
  readonly close: () => Promise<void>
}

/** A push service on a free port of 127.0.0.1 that keeps every push and answers 201 (or the endpoint's status). */
export const standInPushService = async (): Promise<PushService> => {
  const received: Array<Received> = []
  const statuses = new Map<string, number>()
  const server = NodeHttp.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = req.url ?? ""
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(statuses.get(path) ?? 201)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const of = (name: string) => received.filter((r) => r.path === `/push/${name}`)
  return {
    origin,
    endpoint: (name, status = 201) => {
      statuses.set(`/push/${name}`, status)
      return `${origin}/push/${name}`
    },
    received,
    waitFor: async (name, n = 1, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      while (of(name).length < n) {
        if (Date.now() > deadline) throw new Error(`the stand-in push service got ${of(name).length} pushes for ${name}, not ${n}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      return of(name)
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
