/**
 * The bundle signs in to PostgreSQL with pg's crypto helpers rewritten on
 * node:crypto (scripts/pg/crypto-node.cjs, swapped in by scripts/build.mjs):
 * every helper gives the bytes pg's own WebCrypto ones give, so a SCRAM
 * proof (and an MD5 password hash) is the one the server expects.
 */
import { describe, expect, it } from "vitest"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

interface Helpers {
  readonly deriveKey: (password: string, salt: Uint8Array, iterations: number) => Promise<ArrayBuffer | Buffer>
  readonly hmacSha256: (key: ArrayBuffer | Buffer, message: string) => Promise<ArrayBuffer | Buffer>
  readonly sha256: (data: ArrayBuffer | Buffer) => Promise<ArrayBuffer | Buffer>
  readonly hashByName: (name: string, data: Uint8Array) => Promise<ArrayBuffer | Buffer>
  readonly md5: (text: string) => Promise<string>
  readonly postgresMd5PasswordHash: (user: string, password: string, salt: Buffer) => Promise<string>
  readonly randomBytes: (length: number) => Buffer
}

const ours = require("../../../scripts/pg/crypto-node.cjs") as Helpers
const pgs = require("pg/lib/crypto/utils.js") as Helpers

const hex = (b: ArrayBuffer | Buffer) => Buffer.from(b as ArrayBuffer).toString("hex")

/** The client's side of a SCRAM-SHA-256 sign-in (RFC 5802), as pg's sasl.js works it out with the helpers given. */
const proof = async (h: Helpers, password: string, salt: Buffer, iterations: number, authMessage: string) => {
  const salted = await h.deriveKey(password, salt, iterations)
  const clientKey = await h.hmacSha256(salted, "Client Key")
  const storedKey = await h.sha256(clientKey)
  const clientSignature = await h.hmacSha256(storedKey, authMessage)
  const serverKey = await h.hmacSha256(salted, "Server Key")
  return { clientKey: hex(clientKey), clientSignature: hex(clientSignature), serverSignature: hex(await h.hmacSha256(serverKey, authMessage)) }
}

describe("pg's crypto helpers on node:crypto", () => {
  it("work out the same SCRAM-SHA-256 proof as pg's own, for plain and non-ASCII passwords", async () => {
    const salt = Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64")
    const message = "n=,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws"
    for (const password of ["magi_test", "pässwörd ✓"])
      expect(await proof(ours, password, salt, 4096, message)).toEqual(await proof(pgs, password, salt, 4096, message))
  })

  it("hash an MD5 password and a named digest as pg's own do", async () => {
    const salt = Buffer.from([1, 2, 3, 4])
    expect(await ours.postgresMd5PasswordHash("magi", "s3cret", salt)).toBe(await pgs.postgresMd5PasswordHash("magi", "s3cret", salt))
    const data = new TextEncoder().encode("certificate bytes")
    expect(hex(await ours.hashByName("SHA-256", data))).toBe(hex(await pgs.hashByName("SHA-256", data)))
  })

  it("give fresh random bytes of the length asked", () => {
    const a = ours.randomBytes(18)
    expect(a.length).toBe(18)
    expect(a.equals(ours.randomBytes(18))).toBe(false)
  })
})
