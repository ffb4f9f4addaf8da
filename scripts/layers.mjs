// The layering ARCHITECTURE.md describes, checked (run by `npm run lint`):
// every folder of src/ imports only folders below it in LAYERS, and no two
// files import each other, directly or round a circle. Type-only and dynamic
// imports count too: a circle of types is still a circle to read.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** Top to bottom; a folder may import those after it. Folders on one line are peers and import neither way. */
export const LAYERS = [
  ["cli"],
  ["web"],
  ["app"],
  ["daemon"],
  ["chat"],
  ["doctor"],
  ["queue"],
  ["land"],
  ["verify"],
  ["graph"],
  ["runs"],
  ["mcp"],
  ["agents"],
  ["approvals"],
  ["questions"],
  ["devices"],
  ["platform"],
  ["store"]
]

const rankOf = new Map(LAYERS.flatMap((peers, rank) => peers.map((folder) => [folder, rank])))

/** Folders a file in `folder` may not import. */
export const forbiddenFrom = (folder) => {
  const rank = rankOf.get(folder)
  return rank === undefined ? [] : LAYERS.flatMap((peers, r) => (r <= rank ? peers : [])).filter((f) => f !== folder)
}

const importPattern = /(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g

const sourceFiles = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? sourceFiles(p) : /\.ts$/.test(e.name) && !/\.d\.ts$/.test(e.name) ? [p] : []
  })

/** Each file's relative imports, as paths under `src`. */
export const importGraph = (src) => {
  const graph = new Map()
  for (const file of sourceFiles(src)) {
    const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
    const targets = new Set()
    for (const m of text.matchAll(importPattern)) {
      const spec = m[1] ?? m[2]
      targets.add(path.relative(src, path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts"))))
    }
    graph.set(path.relative(src, file), [...targets])
  }
  return graph
}

const folderOf = (file) => (file.includes(path.sep) ? file.split(path.sep)[0] : undefined)

/** Circles among the nodes of `edges` (Tarjan's strongly connected components of more than one node). */
const circles = (edges) => {
  let index = 0
  const stack = []
  const info = new Map()
  const found = []
  const visit = (v) => {
    info.set(v, { index, low: index, on: true })
    index++
    stack.push(v)
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue
      if (!info.has(w)) {
        visit(w)
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low)
      } else if (info.get(w).on) info.get(v).low = Math.min(info.get(v).low, info.get(w).index)
    }
    if (info.get(v).low === info.get(v).index) {
      const component = []
      let w
      do {
        w = stack.pop()
        info.get(w).on = false
        component.push(w)
      } while (w !== v)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const v of edges.keys()) if (!info.has(v)) visit(v)
  return found
}

export const problems = (src) => {
  const graph = importGraph(src)
  const out = []
  const folderEdges = new Map()
  for (const [file, targets] of graph) {
    const from = folderOf(file)
    for (const target of targets) {
      const to = folderOf(target)
      if (from === undefined || to === undefined || from === to) continue
      if (!folderEdges.has(from)) folderEdges.set(from, new Set())
      folderEdges.get(from).add(to)
      if (!rankOf.has(from) || !rankOf.has(to))
        out.push(`src/${file}: the folder ${from === undefined || rankOf.has(from) ? to : from}/ is not in scripts/layers.mjs's LAYERS`)
      else if (forbiddenFrom(from).includes(to))
        out.push(`src/${file} imports src/${target}: ${from}/ sits below ${to}/ and may not import it (ARCHITECTURE.md, Layers)`)
    }
  }
  for (const c of circles(folderEdges)) out.push(`folders import each other: ${c.join(" ↔ ")}`)
  for (const c of circles(graph)) out.push(`files import each other: ${c.map((f) => `src/${f}`).join(" ↔ ")}`)
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = problems(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "src"))
  for (const line of found) console.error(line)
  if (found.length > 0) {
    console.error(`${found.length} layering problem(s): import only downwards (ARCHITECTURE.md, Layers), or move the shared piece down.`)
    process.exit(1)
  }
}
