import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { fireTimesAfter, nextFireAfter } from '../../src/domain/schedule.js';
import { CASES, tellStory, ZONES } from './story.js';
import { alertsOf, replay, tickRows } from './support.js';

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

describe('silence in every zone: an observed hourly job that stops reporting', { timeout: 300_000 }, () => {
  for (const tz of ['Asia/Kathmandu', 'Pacific/Chatham', 'America/St_Johns', 'Etc/GMT+5']) {
    it(`${tz}: each tick is missed at tick + grace, to the minute, and the second opens the alert`, async () => {
      const start = new Date(nextFireAfter('30 22 * * *', tz, new Date('2026-06-15T00:00:00Z')).getTime() - 30_000);
      const ticks = fireTimesAfter('0 * * * *', tz, start, 3);
      const p = profileFor('0 * * * *', tz, {}, start);
      const { db } = await replay({
        start: start.toISOString(),
        until: new Date(ticks[2]!.getTime() + 5 * 60_000).toISOString(),
        platformChannel: 'CPLATFORM',
        tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
        workflows: [{ tenant: 'acme', name: 'job', cron: '0 * * * *', timezone: tz, mode: 'observed' }],
        outcomes: [{ workflow: 'job', from: start.toISOString(), to: ticks[1]!.toISOString(), attempts: [{ status: 'missing' }] }],
      });
      expect(await tickRows(db, 'job', true)).toEqual([`${ticks[0]!.toISOString().slice(5, 16)} missed`, `${ticks[1]!.toISOString().slice(5, 16)} missed`, `${ticks[2]!.toISOString().slice(5, 16)} succeeded`]);
      const missedAt = await db.selectFrom('runs').select('finishedAt').where('status', '=', 'missed').orderBy('tick').execute();
      expect(missedAt.map((r) => r.finishedAt!.toISOString())).toEqual(ticks.slice(0, 2).map((t) => new Date(t.getTime() + p.graceSeconds * 1000).toISOString()));
      const [alert] = await alertsOf(db, 'job');
      expect(alert).toMatchObject({ severity: 'warning', status: 'resolved' });
      expect(alert!.openedAt.toISOString()).toBe(new Date(ticks[1]!.getTime() + p.graceSeconds * 1000).toISOString());
    });
  }
});
