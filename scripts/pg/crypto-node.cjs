// pg's lib/crypto/utils.js, as magi's bundle has it (scripts/build.mjs,
// pgCryptoOnNode): the same functions on node:crypto instead of WebCrypto.
//
// pg signs in with SCRAM-SHA-256 (PostgreSQL's default since 14) through
// `crypto.webcrypto.subtle`, whose first use in a process loads and sets up
// Node's WebCrypto layer: 10–20 ms of every command on the PostgreSQL store,
// for one PBKDF2 and four HMACs that node:crypto does in about 2 ms. The
// results are the same bytes (callers wrap them with `Buffer.from`); only
// the channel-binding hash over TLS, by a name WebCrypto spells, keeps
// WebCrypto, loaded when it is first needed.
"use strict"
const nodeCrypto = require("crypto")

/** @param {number} length */
function randomBytes(length) {
  return nodeCrypto.randomBytes(length)
}

async function md5(string) {
  return nodeCrypto.createHash("md5").update(string, "utf-8").digest("hex")
}

// See AuthenticationMD5Password at https://www.postgresql.org/docs/current/static/protocol-flow.html
async function postgresMd5PasswordHash(user, password, salt) {
  const inner = await md5(password + user)
  const outer = await md5(Buffer.concat([Buffer.from(inner), salt]))
  return "md5" + outer
}

async function sha256(text) {
  return nodeCrypto.createHash("sha256").update(Buffer.from(text)).digest()
}

async function hashByName(hashName, text) {
  return await nodeCrypto.webcrypto.subtle.digest(hashName, text)
}

async function hmacSha256(keyBuffer, msg) {
  return nodeCrypto.createHmac("sha256", Buffer.from(keyBuffer)).update(msg, "utf8").digest()
}

/** PBKDF2-HMAC-SHA-256, 32 bytes, on libuv's pool as WebCrypto's is: the main thread goes on meanwhile. */
function deriveKey(password, salt, iterations) {
  return new Promise((resolve, reject) => nodeCrypto.pbkdf2(password, salt, iterations, 32, "sha256", (err, key) => (err ? reject(err) : resolve(key))))
}

module.exports = {
  postgresMd5PasswordHash,
  randomBytes,
  deriveKey,
  sha256,
  hashByName,
  hmacSha256,
  md5
}
