import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startBot } from './helpers/process.js';

/**
 * The README's first minutes: `npm start` with no Slack credentials and no
 * WORKFLOWS_FILE prints what it would post. The bundled example's
 * flaky-export fails every minute with alertAfter 1, so its alert opens at
 * the first whole minute after the start (hence a slow test: up to two
 * minutes of real time, waited on the output, not slept).
 */
describe('npm start with no configuration', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(2);
  });
  afterAll(async () => t.drop());

  it('prints the bundled example’s alert to the console within a couple of minutes', { timeout: 200_000 }, async () => {
    const bot = startBot({ DATABASE_URL: t.url, PORT: '0' });
    try {
      await bot.waitFor(/no Slack credentials/);
      const opened = await bot.waitFor(/\[slack #CACME0001\] ● Warning \(open\): Acme Analytics \/ flaky-export, 1 failure\. Last error: exited with code 2: ERROR: connection to "warehouse-7" refused .*\n/, 150_000);
      expect(opened).toContain('key alert:');
    } finally {
      expect(await bot.stop()).toBe(0);
    }
  });
});
