/**
 * A private opencode installation for one compat test: its home, XDG
 * folders and config, naming the stand-in as its only provider.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

export const VERSION = "1.18.33"
export const MODEL = "standin/scripted"

/**
 * Folders and environment for one opencode: its config names the stand-in
 * as its only provider. `where` names the folder set, so a test can give a
 * second process (the daemon) other ones.
 */
export const opencodeEnv = (dir: string, where: string, baseUrl: string): Record<string, string> => {
  const root = NodePath.join(dir, where)
  const config = NodePath.join(root, "config", "opencode")
  for (const d of ["home", "data", "state", "cache"]) NodeFs.mkdirSync(NodePath.join(root, d), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(config, "node_modules"), { recursive: true })
  NodeFs.writeFileSync(
    NodePath.join(config, "opencode.json"),
    JSON.stringify({
      autoupdate: false,
      share: "disabled",
      model: MODEL,
      small_model: MODEL,
      enabled_providers: ["standin"],
      provider: {
        standin: {
          npm: "@ai-sdk/openai-compatible",
          name: "Stand-in",
          options: { baseURL: baseUrl, apiKey: "stand-in" },
          models: { scripted: { name: "Scripted", tool_call: true, limit: { context: 100_000, output: 4096 } } }
        }
      }
    })
  )
  // opencode installs @opencode-ai/plugin into every config folder from the
  // npm registry unless the folder's lock already lists it.
  const plugin = { "@opencode-ai/plugin": VERSION }
  NodeFs.writeFileSync(NodePath.join(config, "package.json"), JSON.stringify({ dependencies: plugin }))
  NodeFs.writeFileSync(NodePath.join(config, "package-lock.json"), JSON.stringify({ packages: { "": { dependencies: plugin } } }))
  return {
    HOME: NodePath.join(root, "home"),
    XDG_CONFIG_HOME: NodePath.join(root, "config"),
    XDG_DATA_HOME: NodePath.join(root, "data"),
    XDG_STATE_HOME: NodePath.join(root, "state"),
    XDG_CACHE_HOME: NodePath.join(root, "cache"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    // Anything that would still go out goes to the stand-in as its proxy,
    // where it is recorded and refused; the stand-in itself is direct.
    HTTPS_PROXY: new URL(baseUrl).origin,
    HTTP_PROXY: new URL(baseUrl).origin,
    NO_PROXY: "127.0.0.1,localhost"
  }
}
