import { defineConfig } from 'vitest/config';
import base, { NOISE_TESTS } from './vitest.config.js';

/**
 * `npm run test:noise`: the noise audits alone (`npm run test:slow` runs them too). Each replays days of an incident
 * through the real engine on a virtual clock (about a minute of CPU each),
 * so they are kept out of `npm test`; they measure no time, so unlike the
 * benchmark smokes two run at once.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: NOISE_TESTS,
    exclude: ['**/node_modules/**'],
    testTimeout: 600_000,
    maxWorkers: 2,
  },
});
