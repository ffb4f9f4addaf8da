import { defineConfig, mergeConfig } from "vitest/config"
import base from "./vitest.config.js"

// The compatibility suite alone (`npm run test:agents`): the real pinned
// agent CLIs against local stand-ins for their model APIs.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ["test/compat/**/*.test.ts"],
      reporters: ["default"]
    }
  })
)
