import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: end-to-end tests spawn real processes, keep the pool small.
    maxWorkers: 2,
    minWorkers: 1
  }
})
