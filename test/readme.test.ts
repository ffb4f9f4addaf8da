/**
 * The README's own path for a new user, and the docs' word on who can
 * answer: the things a first hour trips on when the docs say them wrong.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const read = (path: string) => NodeFs.readFileSync(path, "utf8")
const section = (text: string, heading: string) => {
  const start = text.indexOf(`\n## ${heading}\n`)
  expect(start, `no "## ${heading}" section`).toBeGreaterThanOrEqual(0)
  const end = text.indexOf("\n## ", start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}
const docs = () => {
  const out: Array<string> = ["README.md"]
  const walk = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const path = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".md")) out.push(path)
    }
  }
  walk("docs")
  return out
}

describe("the README and the docs", () => {
  it("say npm start serves 127.0.0.1 only, and how a phone reaches the page", () => {
    const readme = read("README.md")
    expect(readme).toMatch(/npm start.*127\.0\.0\.1:7878 only/)
    const reach = readme.slice(readme.indexOf("`npm start` listens on 127.0.0.1 only"))
    expect(reach).toContain("public_url")
    expect(reach).toContain("magi web pair")
  })

  it("name the command agent in the quick start, the way in without a vendor CLI", () => {
    const quick = section(read("README.md"), "Quick start")
    expect(quick).toContain('kind = "command"')
    expect(quick).toContain("docs/agents/command.md")
  })

  it("never say there is no login without saying where pairing applies", () => {
    const web = read("docs/web.md")
    expect(web).not.toMatch(/\nThere is no login/)
    expect(web).toMatch(/On loopback there is no login/)
  })

  it("never speak of 'the Rust magi' as if the reader knew it", () => {
    const found = docs().filter((path) => /the Rust magi/i.test(read(path)))
    expect(found).toEqual([])
  })
})
