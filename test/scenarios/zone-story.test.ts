import { describe, it } from 'vitest';
import { CASES, tellStory, ZONES } from './story.js';

/** The story of ./story.ts in every zone, at an hourly, a business-hours and a weekday cadence. */
describe('the failing-workflow story in every zone', { timeout: 600_000 }, () => {
  for (const tz of ZONES) {
    for (const cron of ['0 * * * *', '*/5 9-17 * * 1-5', '0 9 * * 1-5']) {
      it(`${tz}, ${cron}`, async () => {
        await tellStory(CASES.find((c) => c.cron === cron)!, tz);
      });
    }
  }
});
