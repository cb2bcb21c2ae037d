import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Kept out of `npm test`, run by `npm run test:slow` (which CI runs after `npm test`):
 * - the long sweeps of zones, cadences and DST nights and the checks that start whole processes for
 *   minutes (`*.slow.test.ts`, the replay CLI; their rules are in `npm test`'s domain tests);
 * - the noise audits: days of incidents replayed through the engine, counted against Slack budgets
 *   (also alone: `npm run test:noise`);
 * - the benchmark smokes, one process at a time after the rest (they time what they run).
 */
export const SLOW_TESTS = ['test/replay/replay-cli.test.ts', 'test/**/*.slow.test.ts'];
export const NOISE_TESTS = ['test/noise/**/*.test.ts'];
export const BENCH_SMOKES = ['test/bench/**/*.test.ts'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...SLOW_TESTS, ...NOISE_TESTS, ...BENCH_SMOKES],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Sized for a 2-core machine that other work keeps busy (load 10+): a test waits on conditions, so a long limit costs nothing when it passes.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    setupFiles: ['test/helpers/per-file.ts'],
    pool: 'forks',
    // 2 cores: a few files at once, each on its own database.
    maxWorkers: 3,
    // A worker runs its files one after another on the modules it has loaded: a fresh module graph per file
    // cost about 2.5 s of import each, half the suite's CPU. Each file still has its own database and app;
    // the app's one process-wide state (the secrets it redacts) is reset before each file (per-file.ts).
    isolate: false,
  },
});
