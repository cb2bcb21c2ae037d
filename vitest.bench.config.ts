import { defineConfig } from 'vitest/config';
import base, { BENCH_SMOKES } from './vitest.config.js';

/** `npm run test:slow`, second part: the benchmark smokes, one file at a time (each loads both cores on its own). */
export default defineConfig({
  test: {
    ...base.test,
    include: BENCH_SMOKES,
    exclude: ['**/node_modules/**'],
    testTimeout: 240_000,
    maxWorkers: 1,
    // Benchmarks measure memory and time: each file in a process of its own, as the bot would run.
    isolate: true,
  },
});
