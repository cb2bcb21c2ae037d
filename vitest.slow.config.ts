import { defineConfig } from 'vitest/config';
import base, { SLOW_TESTS } from './vitest.config.js';

/** `npm run test:slow`: benchmark smokes and process-spawning checks, one file at a time (each loads both cores on its own). */
export default defineConfig({
  test: {
    ...base.test,
    include: SLOW_TESTS,
    exclude: ['**/node_modules/**'],
    testTimeout: 240_000,
    maxWorkers: 1,
    // Benchmarks measure memory and time: each file in a process of its own, as the bot would run.
    isolate: true,
  },
});
