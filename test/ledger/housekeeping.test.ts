import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createHousekeeping, type HousekeepingJob } from '../../src/engine/housekeeping.js';
import { Writable } from 'node:stream';
import { createLogger, silentLogger } from '../../src/log.js';
import { createDb, createPool } from '../../src/db/connect.js';
import { counterValue, metrics } from '../../src/metrics.js';
import { startTestApp } from '../helpers/app.js';
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

  it('a firing whose job is still running from the previous firing on another replica is skipped and recorded, not run beside it', async () => {
    const clock = new ManualClock(T0);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let most = 0;
    const job = (slow: boolean): HousekeepingJob => ({
      name: 'long-pass',
      cron: '*/5 * * * *',
      exclusive: true,
      run: async () => {
        most = Math.max(most, ++running);
        if (slow) await blocked;
        running--;
        return { removed: 1 };
      },
    });
    const a = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'a' }, [job(true)]);
    const b = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'b' }, [job(false)]);
    const first = a.fire('long-pass', T0);
    await expect.poll(() => running).toBe(1);
    // The next fire time comes while replica a's pass still runs: replica b claims it, and skips it.
    const at = (m: number) => new Date(T0.getTime() + m * 60_000);
    expect(await b.fire('long-pass', at(5))).toEqual({ ran: false, reason: 'still_running' });
    release();
    expect(await first).toEqual({ ran: true, result: { removed: 1 } });
    // Once it ended, the next firing runs again (the lock went with the pass).
    expect(await b.fire('long-pass', at(10))).toEqual({ ran: true, result: { removed: 1 } });
    expect(most).toBe(1);
    const rows = await t.db.selectFrom('housekeepingFirings').select(['replica', 'result']).where('job', '=', 'long-pass').orderBy('fireAt').execute();
    expect(rows).toEqual([
      { replica: 'a', result: { removed: 1 } },
      { replica: 'b', result: { skipped: 'the previous firing is still running' } },
      { replica: 'b', result: { removed: 1 } },
    ]);
    expect(b.statuses()[0]).toMatchObject({ ticks: 2, failures: 0 });
  });

  it('a firing that found nothing to do logs at debug; one that did something at info', async () => {
    const clock = new ManualClock(T0);
    const lines: { level: number; msg: string; job?: string }[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    let result: Record<string, number> = {};
    const h = createHousekeeping({ db: t.db, clock, logger, replicaId: 'a' }, [{ name: 'every-minute', cron: '* * * * *', run: async () => result }]);
    // The digest job's shape: fired every minute, nothing due most of the time.
    for (let m = 0; m < 3; m++) expect(await h.fire('every-minute', new Date(T0.getTime() + m * 60_000))).toMatchObject({ ran: true });
    expect(lines.filter((l) => l.job === 'every-minute')).toEqual([]);
    result = { sent: 1 };
    await h.fire('every-minute', new Date(T0.getTime() + 3 * 60_000));
    expect(lines.filter((l) => l.job === 'every-minute')).toEqual([expect.objectContaining({ level: 30, msg: 'housekeeping job done', sent: 1 })]);
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

  it('a firing that cannot be claimed because the database is away counts as a failed firing in the job\'s status and the loop metrics', async () => {
    const clock = new ManualClock(T0);
    const unreachable = createDb(createPool('postgres://postgres@127.0.0.1:1/none', 1));
    try {
      const h = createHousekeeping({ db: unreachable, clock, logger: silentLogger, replicaId: 'a' }, [{ name: 'claimless', cron: '*/5 * * * *', run: async () => ({}) }]);
      const before = await counterValue(metrics.loopDbErrors, { loop: 'housekeeping:claimless' });
      await expect(h.fire('claimless', T0)).rejects.toThrow();
      clock.advance(300_000);
      await expect(h.fire('claimless', clock.now())).rejects.toThrow();
      expect(h.statuses()[0]).toMatchObject({ failures: 2, dbErrors: 2, lastErrorAt: clock.now() });
      expect(h.statuses()[0]!.lastTickAt).toBeUndefined();
      expect(h.statuses()[0]!.lastError).toMatch(/ECONNREFUSED|connect/);
      expect(await counterValue(metrics.loopDbErrors, { loop: 'housekeeping:claimless' })).toBe(before + 2);
    } finally {
      await unreachable.destroy();
    }
  });

  it('a firing that fails leaves its last good firing as the last tick; the next success clears the failures', async () => {
    const clock = new ManualClock(T0);
    let fail = false;
    const h = createHousekeeping({ db: t.db, clock, logger: silentLogger, replicaId: 'a' }, [
      { name: 'sometimes', cron: '*/5 * * * *', run: async () => { if (fail) throw new Error('statement timeout'); return {}; } },
    ]);
    await h.fire('sometimes', T0);
    fail = true;
    clock.advance(300_000);
    await h.fire('sometimes', clock.now());
    expect(h.statuses()[0]).toMatchObject({ failures: 1, dbErrors: 0, lastTickAt: T0, lastError: 'statement timeout' });
    fail = false;
    clock.advance(300_000);
    await h.fire('sometimes', clock.now());
    expect(h.statuses()[0]).toMatchObject({ failures: 0, lastTickAt: clock.now() });
  });

  it('/metrics shows each housekeeping job in the seconds-since-tick and failures-in-a-row gauges, like the loops', async () => {
    const clock = new ManualClock(T0);
    const app = await startTestApp(t, {}, { clock, loops: true, databaseUrl: undefined });
    try {
      const text = await (await fetch(`${app.url}/metrics`)).text();
      for (const job of ['retention', 'digest']) {
        expect(text).toMatch(new RegExp(`^scheduler_loop_seconds_since_tick\\{loop="housekeeping:${job}"\\} \\d`, 'm'));
        expect(text).toMatch(new RegExp(`^scheduler_loop_consecutive_failures\\{loop="housekeeping:${job}"\\} 0$`, 'm'));
      }
      expect(text).toMatch(/^scheduler_loop_seconds_since_tick\{loop="run-poller"\} \d/m);
    } finally {
      await app.stop();
    }
  });
});
