// Lint (`npm run lint`, part of `npm test`): ESLint's and typescript-eslint's
// recommended rules, tuned the way the Effect repository tunes them, plus the
// few type-aware rules that catch a promise nobody waits for. Formatting is
// not checked here but by eslint.format.config.mjs (`npm run format:check`).
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"
import magi from "./scripts/eslint/fallback-reason.mjs"
import { forbiddenFrom, LAYERS } from "./scripts/layers.mjs"

// Imports the start-up rule below forbids everywhere in src/ (each folder's
// layering rule repeats them: a later `no-restricted-imports` replaces it).
const startUpPaths = [
  { name: "@effect/platform", message: "import the module itself (@effect/platform/FileSystem): the index evaluates every module at start-up" },
  {
    name: "@effect/platform-node",
    message: "import the module itself (@effect/platform-node/NodeContext): the index evaluates every module at start-up"
  }
]

export default defineConfig(
  { ignores: ["dist/", "test-results/", "scripts/bench/.*.bundle.mjs"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // Effect code: `{}` cases in Data.TaggedEnum, `any` where a type is erased on purpose.
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true }
      ],
      // Terminal text is escape sequences: regexes match control characters on purpose.
      "no-control-regex": "off",
      // A best-effort step that may fail silently is written `try { … } catch {}`.
      "no-empty": ["error", { allowEmptyCatch: true }],
      // Effect.gen bodies need not yield.
      "require-yield": "off"
    }
  },
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error"
    }
  },
  {
    // A swallowed failure says why it is safe (scripts/eslint/fallback-reason.mjs, docs/development.md).
    files: ["src/**/*.ts"],
    ignores: ["src/web/client/**"],
    plugins: { magi },
    rules: { "magi/fallback-reason": "error" }
  },
  {
    // What the CLI evaluates at every start (docs/benchmarks.md, start-up):
    // @effect/platform's index evaluates every module it re-exports (MsgPack
    // loads msgpackr, which probes for a native add-on), so src names each
    // module it uses; the database driver, the web server, the MCP library
    // and the QR encoder are imported dynamically where they are used.
    files: ["src/**/*.ts"],
    ignores: ["src/web/client/**"],
    rules: {
      "no-restricted-imports": ["error", { paths: startUpPaths }]
    }
  },
  // The layering (ARCHITECTURE.md, Layers): a folder of src/ imports only the
  // folders below it. `npm run lint` also runs scripts/layers.mjs, which
  // checks the same order on the whole graph and refuses import circles.
  ...LAYERS.flat().map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    ignores: ["src/web/client/**"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: startUpPaths,
        patterns: forbiddenFrom(folder).map((above) => ({
          regex: `^(\\.\\./)+${above}/`,
          message: `${folder}/ is below ${above}/ (ARCHITECTURE.md, Layers): move the shared piece down, or inject it`
        }))
      }]
    }
  })),
  {
    // The phone page's client runs in the browser; the benches' page scripts too.
    files: ["src/web/client/**/*.ts", "scripts/bench/**/*.mjs"],
    languageOptions: { globals: globals.browser }
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" }
  }
)
