import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "packages/server/test-python/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A test mostly waits on the hub processes and git clients it starts, so more workers than cores pay off.
    maxWorkers: 3,
    minWorkers: 1,
  },
});
