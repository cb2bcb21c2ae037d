import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { scenarioFromLedger } from '../../src/replay/from-ledger.js';
import { TICK_PAGE } from '../../src/replay/ledger-ticks.js';
import { newRunRow, type RunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { roundTrip } from './ledger-round-trip.js';

/**
 * `replay --from-db` under the policy in force reproduces what the engine
 * did: at the edges of the period (an alert already open when it starts) and
 * with manual runs in it. The zones, cadences and fault patterns sweep is
 * ledger-fidelity.slow.test.ts.
 */

const tenants = [{ id: 'acme', name: 'Acme', channel: 'CACME' }];
const fail = { status: 'failed', error: 'connection refused by warehouse-7' } as const;

describe('replay --from-db reproduces the period', { timeout: 300_000 }, () => {
  it('an alert open when the period starts is rebuilt: same opening, severity, escalation and resolution', async () => {
    // Hourly in Kathmandu (UTC+5:45, so at :15 UTC) fails 02:15–06:15: opened at 03:18 (two failures), escalated,
    // resolved by the 07:15 success. The period starts at 05:30, mid-incident.
    const r = await roundTrip(
      {
        start: '2026-03-10T00:00:00Z',
        until: '2026-03-10T10:00:00Z',
        tenants,
        workflows: [{ tenant: 'acme', name: 'hourly', cron: '0 * * * *', timezone: 'Asia/Kathmandu' }],
        outcomes: [{ workflow: 'hourly', from: '2026-03-10T02:00:00Z', to: '2026-03-10T06:59:00Z', attempts: [fail] }],
      },
      'acme',
      { since: '2026-03-10T05:30:00Z' },
    );
    expect(r.lived.alerts).toHaveLength(1);
    expect(r.lived.alerts[0]).toBe('hourly critical opened 2026-03-10T03:18:00.000Z escalated 2026-03-10T05:18:00.000Z resolved 2026-03-10T07:16:00.000Z v1');
    expect(r.replayed).toEqual(r.lived);
    // From the last success before the streak (01:15), not from 05:30: the replay would open a warning at 06:18 instead.
    expect(r.scenario.start).toBe('2026-03-10T01:15:00.000Z');
    expect(r.notes).toContainEqual(expect.stringMatching(/^alerts open at the start \(hourly\) are rebuilt from 2026-03-10T01:15:00\.000Z/));
  });

  it('a manual run is replayed as the Run now that started it: it resolves the alert when it did', async () => {
    const r = await roundTrip(
      {
        start: '2026-03-10T00:00:00Z',
        until: '2026-03-10T08:00:00Z',
        tenants,
        workflows: [{ tenant: 'acme', name: 'hourly', cron: '0 * * * *', policy: { retries: 0 } }],
        outcomes: [{ workflow: 'hourly', from: '2026-03-10T01:00:00Z', to: '2026-03-10T06:00:00Z', attempts: [fail] }],
        actions: [{ at: '2026-03-10T04:20:00Z', user: 'U0ONCALL', channel: 'CACME', action: 'run_now', workflow: 'hourly', outcome: { status: 'succeeded', rows: 12, durationSeconds: 300 } }],
      },
      'acme',
    );
    expect(r.lived.events).toContain('2026-03-10T04:25:00.000Z hourly resolved v1');
    expect(r.replayed).toEqual(r.lived);
    expect(r.scenario.actions).toEqual([
      { at: '2026-03-10T04:20:00.000Z', user: 'U0ONCALL', channel: 'CACME', action: 'run_now', workflow: 'hourly', outcome: { status: 'succeeded', durationSeconds: 300, rows: 12 } },
    ]);
    expect(r.notes).toContainEqual('1 manual run(s) are replayed as Run now in CACME when they started');
  });

  it('maintenance windows are set again when they were: failures inside them are not held against the workflow', async () => {
    const r = await roundTrip(
      {
        start: '2026-10-24T22:00:00Z',
        until: '2026-10-25T12:00:00Z',
        tenants,
        workflows: [
          { tenant: 'acme', name: 'hourly', cron: '30 * * * *', timezone: 'Europe/Berlin', policy: { retries: 0 } },
          { tenant: 'acme', name: 'quarter', cron: '*/15 * * * *', policy: { retries: 0 } },
        ],
        outcomes: [
          { workflow: 'hourly', from: '2026-10-25T00:00:00Z', to: '2026-10-25T05:00:00Z', attempts: [fail] },
          { workflow: 'quarter', from: '2026-10-25T03:00:00Z', to: '2026-10-25T04:00:00Z', attempts: [fail] },
        ],
        maintenance: [
          // The hourly job's own window over the Berlin fall-back night, set beforehand.
          { at: '2026-10-24T23:00:00Z', tenant: 'acme', workflow: 'hourly', startsAt: '2026-10-25T00:00:00Z', endsAt: '2026-10-25T03:00:00Z', reason: 'warehouse upgrade' },
          // The whole tenant, set after its failures began.
          { at: '2026-10-25T03:40:00Z', tenant: 'acme', startsAt: '2026-10-25T03:20:00Z', endsAt: '2026-10-25T04:30:00Z' },
        ],
      },
      'acme',
    );
    // The hourly job's failures in its window are not counted; the tenant's window, set at 03:40, came too late for 03:30.
    expect(r.lived.alerts).toEqual([
      'quarter warning opened 2026-10-25T03:31:00.000Z escalated - resolved 2026-10-25T04:16:00.000Z v1',
      'hourly warning opened 2026-10-25T04:31:00.000Z escalated - resolved 2026-10-25T05:31:00.000Z v1',
    ]);
    expect(r.replayed).toEqual(r.lived);
    expect(r.scenario.maintenance).toEqual([
      { at: '2026-10-24T23:00:00.000Z', tenant: 'acme', workflow: 'hourly', startsAt: '2026-10-25T00:00:00.000Z', endsAt: '2026-10-25T03:00:00.000Z', reason: 'warehouse upgrade' },
      { at: '2026-10-25T03:40:00.000Z', tenant: 'acme', startsAt: '2026-10-25T03:20:00.000Z', endsAt: '2026-10-25T04:30:00.000Z' },
    ]);
  });

  it('a shadow upstream is replayed in shadow: it holds no downstream back, and only the platform channel hears it', async () => {
    const r = await roundTrip(
      {
        start: '2026-03-08T00:00:00Z',
        until: '2026-03-08T08:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants,
        workflows: [
          { tenant: 'acme', name: 'load', cron: '0 * * * *', timezone: 'America/New_York', policy: { retries: 0 }, shadow: true },
          { tenant: 'acme', name: 'report', cron: '10 * * * *', timezone: 'America/New_York', policy: { retries: 0 }, dependsOn: ['load'] },
        ],
        outcomes: [
          { workflow: 'load', from: '2026-03-08T02:00:00Z', to: '2026-03-08T05:00:00Z', attempts: [fail] },
          { workflow: 'report', from: '2026-03-08T02:00:00Z', to: '2026-03-08T05:30:00Z', attempts: [fail] },
        ],
      },
      'acme',
    );
    expect(r.lived.alerts.map((a) => a.split(' ')[0])).toEqual(['load', 'report']);
    expect(r.lived.told).toContain('opened → slack:CPLATFORM');
    expect(r.replayed).toEqual(r.lived);
    expect(r.scenario.workflows.map((w) => [w.name, w.shadow ?? false])).toEqual([['load', true], ['report', false]]);
  });
});

describe('replay --from-db reads a long ledger a page at a time', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
    const wf = await makeWorkflow(t.db, { name: 'minutely', cron: '* * * * *' });
    // Five days of a minutely workflow, every hundredth tick failed then recovered by its retry.
    const start = Date.parse('2026-03-01T00:00:00Z');
    const rows: RunRow[] = [];
    for (let i = 0; i < 5 * 1440; i++) {
      const tick = new Date(start + i * 60_000);
      const failed = i % 100 === 50;
      rows.push(newRunRow({ workflowId: wf.id, tick, trigger: 'schedule', status: 'succeeded', attemptStatus: failed ? 'failed' : 'succeeded', attemptError: failed ? 'timeout' : null, startedAt: tick, finishedAt: new Date(tick.getTime() + 20_000), processedAt: tick }));
    }
    for (let i = 0; i < rows.length; i += 2_000) {
      const inserted = await t.db.insertInto('runs').values(rows.slice(i, i + 2_000)).returning(['id', 'tick', 'attemptStatus']).execute();
      const retries = inserted.filter((r) => r.attemptStatus === 'failed').map((r) =>
        newRunRow({ workflowId: wf.id, tick: r.tick, trigger: 'retry', attempt: 2, originalRunId: r.id, status: 'succeeded', attemptStatus: 'succeeded', startedAt: r.tick, finishedAt: r.tick, processedAt: r.tick }),
      );
      if (retries.length) await t.db.insertInto('runs').values(retries).execute();
    }
    // Another tenant with a workflow of the same name: its failures, alert, manual run and window are its own.
    await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
    const other = await makeWorkflow(t.db, { tenantId: 'globex', name: 'minutely', cron: '* * * * *' });
    const tick = new Date('2026-03-02T00:00:00Z');
    await t.db.insertInto('runs').values([
      newRunRow({ workflowId: other.id, tick, trigger: 'schedule', status: 'failed', attemptStatus: 'failed', attemptError: 'globex secret', startedAt: tick, finishedAt: tick, processedAt: tick }),
      newRunRow({ workflowId: other.id, tick: null, trigger: 'manual', requestedBy: 'U0GLOBEX', status: 'succeeded', startedAt: tick, finishedAt: tick, processedAt: tick }),
    ]).execute();
    await t.db.insertInto('alerts').values({ workflowId: other.id, generation: 1, status: 'open', severity: 'critical', openedAt: new Date('2026-02-20T00:00:00Z'), cadenceSeconds: 60, policy: JSON.stringify({}), consecutiveFailures: 9, updatedAt: tick }).execute();
    await t.db.insertInto('maintenanceWindows').values({ tenantId: 'globex', workflowId: null, startsAt: tick, endsAt: new Date(tick.getTime() + 3_600_000), reason: 'globex only', createdBy: 'U0GLOBEX', recurrence: null, toldAt: null, createdAt: tick }).execute();
  }, 120_000);
  afterAll(async () => {
    await t?.drop();
  });

  it('reads one tenant only: another tenant\'s runs, alerts, manual runs and windows stay out', async () => {
    const { scenario, notes } = await scenarioFromLedger(t.db, { tenant: 'acme', since: new Date('2026-03-01T00:00:00Z'), until: new Date('2026-03-05T23:59:00Z') });
    expect(scenario.start).toBe('2026-03-01T00:00:00.000Z');
    expect(JSON.stringify(scenario)).not.toMatch(/globex/i);
    expect(scenario.actions).toBeUndefined();
    expect(scenario.maintenance).toBeUndefined();
    expect(notes).toEqual([]);
  });

  it('names the ticks the schedule had and the ledger does not (a pause, the bot down), which the replay fires and sees succeed', async () => {
    const { notes } = await scenarioFromLedger(t.db, { tenant: 'acme', since: new Date('2026-03-05T23:00:00Z'), until: new Date('2026-03-06T01:00:00Z') });
    expect(notes).toEqual(['61 tick(s) of minutely have no run in the ledger (paused, disabled or not watched then) and are replayed as successes']);
  });

  it('no statement returns more than a page of runs, and every tick is still folded in', async () => {
    let largest = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        largest = Math.max(largest, args.result.rows.length);
        return args.result;
      },
    };
    const { scenario } = await scenarioFromLedger(t.db.withPlugin(counting), { tenant: 'acme', since: new Date('2026-03-01T00:00:00Z'), until: new Date('2026-03-06T00:00:00Z') });
    expect(largest).toBeLessThanOrEqual(TICK_PAGE);
    const recovered = scenario.outcomes!.filter((o) => o.attempts.length === 2);
    expect(recovered).toHaveLength(72);
    expect(recovered[0]).toMatchObject({ from: '2026-03-01T00:50:00.000Z', to: '2026-03-01T00:50:00.000Z', attempts: [{ status: 'failed', error: 'timeout' }, { status: 'succeeded' }] });
    expect(recovered.at(-1)!.from).toBe('2026-03-05T23:10:00.000Z');
    // Between the recovered ticks, each run of ordinary ticks is one rule: the page edges split none.
    expect(scenario.outcomes).toHaveLength(72 * 2 + 1);
  });
});
