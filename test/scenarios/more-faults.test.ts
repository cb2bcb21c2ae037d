import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { takeOwnership } from '../../src/ledger/alert-actions.js';
import { reportRun as ingestRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, PLATFORM, reportRun, type Engine, stepUntil } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';
import { startOutboxRig } from '../helpers/slack-outbox.js';

/** Four shapes nobody had pinned: a tenant without a channel, a late report for a missed tick, a retry that times out, a one-tenant storm (one storm message per channel, issue 16). */

const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, at('01:55')); // PLATFORM_CHANNEL is CPLATFORM
});
afterEach(async () => t.drop());

async function destinationsOf(alertId: number): Promise<string[]> {
  const rows = await t.db.selectFrom('notifications').select('destination').where('alertId', '=', alertId).execute();
  return [...new Set(rows.map((r) => r.destination))];
}

describe('more faults', { timeout: 120_000 }, () => {
  it('a tenant with no Slack channel: its failing workflow alerts on the platform channel only, in one thread', async () => {
    await makeTenant(t.db, { id: 'quiet', name: 'Quiet Co', channel: null });
    const wf = await makeWorkflow(t.db, { tenantId: 'quiet', name: 'export', cron: '0 2 * * *' });
    engine.clock.set(at('02:05'));
    await reportRun(t.db, wf, at('02:00'), { status: 'failed', error: 'disk full' }, engine.clock.now());
    await engine.drain();
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical' });
    expect(await destinationsOf(alert.id)).toEqual([`slack:${PLATFORM}`]);

    const rig = await startOutboxRig(t.db, { start: engine.clock.now() });
    try {
      await rig.drain();
      expect(rig.slack.roots(PLATFORM)).toHaveLength(1);
      expect(rig.slack.roots(PLATFORM)[0]!.metadata?.event_payload.workflow).toBe('export');
      // Nothing went anywhere else: every message call named the platform channel.
      const channels = new Set(rig.slack.calls.filter((c) => c.method.startsWith('chat.')).map((c) => c.channel));
      expect(channels).toEqual(new Set([PLATFORM]));
      const threads = await t.db.selectFrom('alertThreads').select(['destination', 'channel']).where('alertId', '=', alert.id).execute();
      expect(threads).toEqual([{ destination: `slack:${PLATFORM}`, channel: PLATFORM }]);
    } finally {
      await rig.close();
    }
  });

  it('a missed tick reported late takes its row over with the real outcome (one row per tick); a second report of it is a run outside the tick', async () => {
    await makeTenant(t.db);
    const wf = await makeWorkflow(t.db, { name: 'feed', cron: '0 2 * * *', nextTickAt: at('02:00') });
    await engine.step(); // the monitor is up from 01:55
    // A daily cadence's grace is 30 minutes: the 02:00 tick is missed at 02:30.
    await stepUntil(engine, at('02:31'));
    const missed = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(missed).toMatchObject({ status: 'missed', tick: at('02:00'), trigger: 'schedule' });
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ status: 'open', severity: 'critical' });

    engine.clock.set(at('02:40'));
    const deps = engine.deps;
    // The late report naming its tick takes the missed row over (docs/alerts.md, "Late reports").
    const withTick = await ingestRun(deps, { tenant: 'acme', workflow: 'feed', status: 'succeeded', tick: at('02:00'), externalId: 'late-1' }, {});
    expect(withTick).toMatchObject({ kind: 'created', run: { id: missed.id, status: 'succeeded' } });

    // The tick has its verdict now: another end without a tick is a run outside any tick, not a second verdict.
    const noTick = await ingestRun(deps, { tenant: 'acme', workflow: 'feed', status: 'succeeded', externalId: 'late-2' }, {});
    expect(noTick.kind).toBe('created');
    if (noTick.kind !== 'created') throw new Error('unreachable');
    expect(noTick.run).toMatchObject({ tick: null, trigger: 'external', originalRunId: null });
    await engine.drain();

    const originals = await t.db.selectFrom('runs').select(['tick', 'status']).where('workflowId', '=', wf.id).where('tick', 'is not', null).execute();
    expect(originals).toEqual([{ tick: at('02:00'), status: 'succeeded' }]);
    expect((await t.db.selectFrom('alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('resolved');
    const all = await t.db.selectFrom('runs').select(['trigger', 'status']).where('workflowId', '=', wf.id).orderBy('id').execute();
    expect(all).toEqual([
      { trigger: 'schedule', status: 'succeeded' },
      { trigger: 'external', status: 'succeeded' },
    ]);
  });

  it('a daily managed tick whose retry times out: the budget goes on, the verdict is failed "timed out", one critical alert', async () => {
    await makeTenant(t.db);
    const timeoutSeconds = 1800;
    const wf = await makeWorkflow(t.db, {
      name: 'nightly',
      cron: '0 2 * * *',
      mode: 'managed',
      launcher: JSON.stringify({ kind: 'command', command: 'true' }),
      policy: JSON.stringify({ timeoutSeconds }), // retries stay the daily default: 3
    });
    // Attempts 2 and 4 are supervised (their leases kept fresh) but never end: only their deadline fails them.
    const never = { status: 'succeeded' as const, rows: null, afterMs: minutes(48 * 60) };
    const fails = { status: 'failed' as const, error: 'connection reset', afterMs: minutes(3) };
    engine.clock.set(at('02:00'));
    engine.launcher.script(wf.id, fails, never, fails, never);
    const original = await fireTick(engine, wf, at('02:00'));
    await stepUntil(engine, new Date(at('02:00').getTime() + minutes(3 + 30 + 3 + 30 + 5)));

    const attempts = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).orderBy('attempt').execute();
    expect(attempts.map((r) => [r.attempt, r.trigger, r.attemptStatus ?? r.status, r.attemptError ?? r.error])).toEqual([
      [1, 'schedule', 'failed', 'connection reset'],
      [2, 'retry', 'failed', 'timed out'],
      [3, 'retry', 'failed', 'connection reset'],
      [4, 'retry', 'failed', 'timed out'],
    ]);
    const verdict = attempts.find((r) => r.id === original.id)!;
    expect(verdict).toMatchObject({ status: 'failed', error: 'timed out', outcomeNote: 'failed on all 4 attempts' });
    const alerts = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).execute();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ status: 'open', severity: 'critical', lastError: 'timed out', consecutiveFailures: 1 });
    const opened = await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', alerts[0]!.id).where('kind', '=', 'opened').execute();
    expect(opened).toHaveLength(1);
  });

  it('50 workflows of one tenant failing at one tick: 50 alerts, one storm message per channel, each alert still ownable from it', async () => {
    await makeTenant(t.db);
    const workflows = [];
    for (let i = 0; i < 50; i++) workflows.push(await makeWorkflow(t.db, { name: `job-${String(i).padStart(2, '0')}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1 }) }));
    engine.clock.set(at('02:01'));
    for (const wf of workflows) await reportRun(t.db, wf, at('02:00'), { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
    await engine.drain();
    const alerts = await t.db.selectFrom('alerts').select('id').execute();
    expect(alerts).toHaveLength(50);
    const rows = await t.db.selectFrom('notifications').select(['idempotencyKey', 'destination']).execute();
    expect(new Set(rows.map((r) => r.idempotencyKey)).size).toBe(rows.length);
    expect(rows.filter((r) => r.destination === 'slack:CACME')).toHaveLength(50);
    expect(rows.filter((r) => r.destination === `slack:${PLATFORM}`)).toHaveLength(50);
    // One storm per channel took in every opening (the default: 5 openings within 2 minutes make a storm).
    const storms = await t.db.selectFrom('storms').select(['id', 'destination']).orderBy('destination').execute();
    expect(storms.map((s) => s.destination)).toEqual(['slack:CACME', `slack:${PLATFORM}`]);
    for (const s of storms) expect(await t.db.selectFrom('stormAlerts').select('alertId').where('stormId', '=', s.id).execute()).toHaveLength(50);

    const rig = await startOutboxRig(t.db, { start: engine.clock.now() });
    try {
      await rig.drain({ maxClockMs: 3_600_000, stepMs: 1000 });
      for (const channel of ['CACME', PLATFORM]) {
        const roots = rig.slack.roots(channel);
        expect(roots).toHaveLength(1); // the storm message, not 50 roots
        expect(rig.slack.callsTo('chat.postMessage').filter((c) => c.channel === channel).length).toBeLessThanOrEqual(5);
        const blocks = JSON.stringify(roots[0]!.blocks);
        expect(blocks).toContain('Storm: 50 alerts');
        for (const wf of workflows.slice(0, 40)) expect(blocks).toContain(wf.name);
        expect(blocks).toContain('10 more open');
      }
      const unsent = await t.db.selectFrom('notifications').select('status').where('status', '!=', 'sent').execute();
      expect(unsent).toEqual([]);

      // Each alert keeps its own state and owner: taking one re-renders the storm message in place, posts nothing.
      const posts = rig.slack.callsTo('chat.postMessage').length;
      const job07 = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.id').where('workflows.name', '=', 'job-07').executeTakeFirstOrThrow();
      rig.clock.advance(minutes(1));
      engine.clock.set(rig.clock.now());
      const taken = await takeOwnership(engine.deps, { alertId: job07.id, actor: { user: 'UOWNER', channel: 'CACME' }, scope: { tenantId: 'acme' } });
      expect(taken.kind).toBe('ok');
      await rig.drain({ maxClockMs: 600_000, stepMs: 1000 });
      expect(rig.slack.callsTo('chat.postMessage')).toHaveLength(posts);
      const storm = rig.slack.roots('CACME')[0]!;
      expect(storm.updates).toBeGreaterThan(0);
      expect(JSON.stringify(storm.blocks)).toMatch(/job-07\*[^"]*owner <@UOWNER>/);
    } finally {
      await rig.close();
    }
  });
});
