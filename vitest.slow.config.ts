import { defineConfig } from 'vitest/config';
import base, { NOISE_TESTS, SLOW_TESTS } from './vitest.config.js';

/**
 * `npm run test:slow`, first part: the long sweeps, the process-spawning checks and the noise
 * audits, two files at once. None of them measures time: each waits on conditions or runs on a
 * virtual clock, and most spend their time on one core (or waiting for a minute to turn), so two at
 * once keep both cores busy. The benchmark smokes follow on their own (vitest.bench.config.ts).
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [...SLOW_TESTS, ...NOISE_TESTS],
    exclude: ['**/node_modules/**'],
    testTimeout: 600_000,
    maxWorkers: 2,
    // Each file in a process of its own, as the bot would run (they start whole apps for minutes).
    isolate: true,
  },
});
