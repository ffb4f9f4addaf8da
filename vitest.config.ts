import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real agent CLIs (test/compat) are installed once per run, into a
    // cache outside node_modules, before any test starts.
    // One real PostgreSQL server for the run, for the store's contract
    // tests and the end-to-end tests on the PostgreSQL backend.
    globalSetup: ["test/compat/installAgents.ts", "test/pgServer.ts"],
    // The JSON report is what `.ci/run` counts passes and failures from.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: end-to-end tests spawn real processes, keep the pool small.
    maxWorkers: 2,
    minWorkers: 1
  }
})
