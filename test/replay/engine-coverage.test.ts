import { afterEach, describe, expect, it } from 'vitest';
import { fireTimesBetween } from '../../src/domain/schedule.js';
import { replayScenario } from '../../src/replay/replay-scenario.js';
import { checkScenario } from '../../src/replay/scenario.js';
import { syntheticScenario } from '../../src/replay/synthetic-scenario.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { threadsOf } from './transcript-shape.js';

let t: TestDatabase | undefined;
afterEach(async () => {
  await t?.drop();
  t = undefined;
});

describe('the virtual clock drives the real engine', { timeout: 120_000 }, () => {
  it('every tick of every workflow between start and until runs exactly once, none skipped, none lost', async () => {
    // One workflow's runs take longer than a run lease (60 s): the replay supervises them like a launcher would.
    const scenario = syntheticScenario({ workflows: 6, hours: 3, tenants: 2, outcomes: [{ workflow: 'tenant-2/job-004', durationSeconds: 200, attempts: [{ status: 'succeeded' }] }] });
    t = await createTestDatabase();
    const result = await replayScenario(scenario, { db: t.db });

    const expected = fireTimesBetween('*/5 * * * *', 'UTC', new Date(scenario.start.getTime() - 1), scenario.until).map((d) => d.toISOString());
    const rows = await t.db
      .selectFrom('runs')
      .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
      .select(['workflows.name', 'runs.tick', 'runs.status', 'runs.error'])
      .where('runs.originalRunId', 'is', null)
      .orderBy('runs.tick')
      .execute();
    for (const w of scenario.workflows) {
      const ticks = rows.filter((r) => r.name === w.name).map((r) => r.tick!.toISOString());
      expect(ticks, w.name).toEqual(expected);
    }
    expect(rows.filter((r) => r.status === 'skipped')).toEqual([]);
    // Only runs started at the very end are still going when the window closes.
    expect(rows.filter((r) => r.status === 'running').every((r) => r.tick!.getTime() === scenario.until.getTime())).toBe(true);
    expect(rows.filter((r) => r.error === 'worker lost' || r.error === 'timed out')).toEqual([]);
    // The incidents: each tenant's failing hour (13 ticks, both ends included) opened one alert, told in both channels.
    expect(result.transcript.summary).toMatchObject({ alerts: 2, roots: 4, failedTicks: 26 });
    for (const thread of threadsOf(result.transcript.calls)) expect(thread.events[0]).toBe('opened');
  });

  it('the escalation clock runs on its own grid of virtual time, every ESCALATION_INTERVAL_SECONDS from the start', async () => {
    // Opens at 02:01 (alertAfter 1) with escalate_at 02:06 (multiplier 1 × 5 min); needs three successes to
    // resolve (02:05, 02:10, 02:15 → 02:16), so it is open, unowned and due from 02:06 to 02:16.
    const scenario = checkScenario({
      start: '2026-03-10T02:00:00Z',
      until: '2026-03-10T02:30:00Z',
      tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
      workflows: [{ tenant: 'acme', name: 'check', cron: '*/5 * * * *', policy: { alertAfter: 1, escalationMultiplier: 1, recoverAfter: 3 } }],
      outcomes: [{ workflow: 'check', from: '2026-03-10T02:00:00Z', to: '2026-03-10T02:00:00Z', attempts: [{ status: 'failed', error: 'boom' }] }],
    });
    const replayWith = async (intervalSeconds: number) => {
      t = await createTestDatabase();
      const { transcript } = await replayScenario(scenario, { db: t.db, escalationIntervalSeconds: intervalSeconds });
      const alert = await t.db.selectFrom('alerts').selectAll().executeTakeFirstOrThrow();
      await t.drop();
      t = undefined;
      return { escalatedAt: alert.escalatedAt?.toISOString() ?? null, resolvedAt: alert.resolvedAt?.toISOString(), thread: threadsOf(transcript.calls)[0]!.events };
    };
    expect(await replayWith(60)).toEqual({ escalatedAt: '2026-03-10T02:06:00.000Z', resolvedAt: '2026-03-10T02:16:00.000Z', thread: ['opened', 'escalated', 'resolved'] });
    // Every 7 minutes: 02:00, 02:07, 02:14: the first look after the deadline is 02:07.
    expect(await replayWith(420)).toEqual({ escalatedAt: '2026-03-10T02:07:00.000Z', resolvedAt: '2026-03-10T02:16:00.000Z', thread: ['opened', 'escalated', 'resolved'] });
    // Every 20 minutes: the next look (02:20) comes after it resolved.
    expect(await replayWith(1200)).toEqual({ escalatedAt: null, resolvedAt: '2026-03-10T02:16:00.000Z', thread: ['opened', 'resolved'] });
  });
});
