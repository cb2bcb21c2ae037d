import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createHousekeeping, type HousekeepingJob } from '../../src/engine/housekeeping.js';
import { silentLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { T0 } from '../helpers/factories.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe('housekeeping on a schedule', () => {
  it('two replicas firing at the same scheduled instants run each job once per instant, and show it in their statuses', async () => {
    const clock = new ManualClock(T0);
    const runs: string[] = [];
    const jobs = (replica: string): HousekeepingJob[] => [
      { name: 'retention', cron: '17 * * * *', run: async () => (runs.push(`retention@${replica}`), { runs: 0 }) },
      { name: 'digest', cron: '0 8 * * *', timezone: 'Europe/Paris', run: async () => (runs.push(`digest@${replica}`), { sent: 1 }) },
    ];
    const a = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'a' }, jobs('a'));
    const b = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'b' }, jobs('b'));

    const instants = [new Date(T0.getTime() + 17 * 60_000), new Date(T0.getTime() + 77 * 60_000)];
    const outcomes = [];
    for (const at of instants) {
      outcomes.push(...(await Promise.all([a.fire('retention', at), b.fire('retention', at), a.fire('digest', at), b.fire('digest', at)])));
    }
    expect(runs.filter((r) => r.startsWith('retention'))).toHaveLength(2);
    expect(runs.filter((r) => r.startsWith('digest'))).toHaveLength(2);
    expect(outcomes.filter((o) => o.ran)).toHaveLength(4);
    expect(outcomes.filter((o) => !o.ran)).toHaveLength(4);

    const firings = await t.db.selectFrom('housekeepingFirings').selectAll().orderBy(['fireAt', 'job']).execute();
    expect(firings).toHaveLength(4);
    for (const f of firings) {
      expect(f.finishedAt).not.toBeNull();
      expect(f.error).toBeNull();
      expect(runs).toContain(`${f.job}@${f.replica}`);
    }
    expect(firings.find((f) => f.job === 'digest')!.result).toEqual({ sent: 1 });

    // Every replica that fired saw the firing (ran or found it claimed): both stay ready.
    for (const h of [a, b]) {
      const statuses = h.statuses();
      expect(statuses.map((s) => s.name)).toEqual(['housekeeping:retention', 'housekeeping:digest']);
      expect(statuses.every((s) => s.ticks === 2 && s.lastTickAt?.getTime() === T0.getTime())).toBe(true);
      expect(statuses[0]!.intervalMs).toBe(3_600_000);
      expect(statuses[1]!.intervalMs).toBe(86_400_000);
    }
  });

  it('a failing job is recorded with its error and does not stop the next firing', async () => {
    const clock = new ManualClock(T0);
    let fail = true;
    const h = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'a' }, [
      { name: 'flaky', cron: '*/5 * * * *', run: async () => { if (fail) throw new Error('disk full'); return { ok: 1 }; } },
    ]);
    expect(await h.fire('flaky', T0)).toEqual({ ran: true, result: { error: 'disk full' } });
    fail = false;
    expect(await h.fire('flaky', new Date(T0.getTime() + 300_000))).toEqual({ ran: true, result: { ok: 1 } });
    const rows = await t.db.selectFrom('housekeepingFirings').select(['error', 'result']).where('job', '=', 'flaky').orderBy('fireAt').execute();
    expect(rows).toEqual([{ error: 'disk full', result: null }, { error: null, result: { ok: 1 } }]);
    expect(h.statuses()[0]!.lastError).toBe('disk full');
  });
});
