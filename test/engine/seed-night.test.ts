import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { isNotifiedKind } from '../../src/domain/events.js';
import { workflowHistory } from '../../src/ledger/alert-queries.js';
import { requestRunNow } from '../../src/services/run-now.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, driveSeedNight, notificationStory, PLATFORM, type Engine, type SeedOutcome } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * seeds/000 "The same incident, replayed": a daily nightly-pipeline at 02:00
 * and a five-minute quality-check, one tenant, both channels. Every attempt takes
 * three minutes of the test clock; the engine steps once a minute.
 */
const NIGHT = new Date('2026-03-10T01:59:00Z');
const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);

let t: TestDatabase;
let engine: Engine;
let nightly: Workflow;
let check: Workflow;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, NIGHT);
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const launcher = JSON.stringify({ kind: 'command', command: 'true' });
  nightly = await makeWorkflow(t.db, { name: 'nightly-pipeline', cron: '0 2 * * *', mode: 'managed', launcher });
  check = await makeWorkflow(t.db, { name: 'quality-check', cron: '*/5 * * * *', mode: 'managed', launcher });
});
afterEach(async () => t.drop());

/** The seed night to `until`; `beforeStep` acts at a minute before the engine steps. */
const night = (until: Date, outcomeFor: SeedOutcome, beforeStep?: (now: Date) => Promise<void>) => driveSeedNight(engine, { nightly, check }, until, outcomeFor, { beforeStep });

// A whole night stepped minute by minute through every loop: minutes of CPU on a loaded 2-core machine.
describe('the same incident, replayed', { timeout: 180_000 }, () => {
  it('transient fault: the retry recovers the nightly, the check passes next tick: zero alerts, zero notifications', async () => {
    await night(at('02:30'), (w, tick, attempt) => {
      if (w.id === nightly.id) return attempt === 1 ? 'fail' : 'ok';
      return tick.getTime() === at('02:05').getTime() ? 'fail' : 'ok';
    });

    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
    expect(await t.db.selectFrom('notifications').selectAll().execute()).toEqual([]);

    const [tick] = await workflowHistory(t.db, nightly.id, 5);
    expect(tick!.status).toBe('succeeded');
    expect(tick!.outcomeNote).toBe('recovered on attempt 2');
    expect(tick!.run.attemptStatus).toBe('failed');
    expect(tick!.attempts.map((a) => [a.attempt, a.trigger, a.status])).toEqual([
      [1, 'schedule', 'failed'],
      [2, 'retry', 'succeeded'],
    ]);
    expect(tick!.attempts[0]!.error).toMatch(/connection reset/);
    // One original row per tick; the customer sees one row.
    const originals = await t.db.selectFrom('runs').select('id').where('workflowId', '=', nightly.id).where('originalRunId', 'is', null).execute();
    expect(originals).toHaveLength(1);
  });

  it('genuine defect: one critical for the nightly, one warning that escalates for the check, both resolve; the rows tell that story on both channels', async () => {
    await night(
      at('09:10'),
      (w, tick) => (w.id === nightly.id ? 'fail' : tick >= at('02:05') && tick < at('09:05') ? 'fail' : 'ok'),
      async (now) => {
        if (now.getTime() !== at('09:00').getTime()) return;
        engine.launcher.script(nightly.id, { status: 'succeeded', rows: 1200 });
        const started = await requestRunNow(engine.deps, { workflowId: nightly.id, actor: { user: 'U0FIXER' }, scope: { tenantId: 'acme' } });
        expect(started.kind).toBe('started');
      },
    );

    const alerts = await t.db.selectFrom('alerts').selectAll().orderBy('id').execute();
    expect(alerts).toHaveLength(2);
    const [pipeline, quality] = alerts as [(typeof alerts)[0], (typeof alerts)[0]];

    // Nightly: all four attempts (02:00, 02:03, 02:06, 02:09) fail; critical right after the last one ends at 02:12.
    expect(pipeline.workflowId).toBe(nightly.id);
    expect(pipeline.openedAt).toEqual(at('02:12'));
    expect(pipeline.severity).toBe('critical');
    expect(pipeline.escalatedAt).toBeNull();
    expect(pipeline.status).toBe('resolved');
    expect(pipeline.resolvedAt).toEqual(at('09:00'));
    const attempts = await t.db.selectFrom('runs').select(['attempt', 'status']).where('workflowId', '=', nightly.id).where('tick', '=', at('02:00')).orderBy('attempt').execute();
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(attempts[0]!.status).toBe('failed');

    // Quality check: third confirmed failure at 02:15 opens a warning; it escalates on the clock at 02:30 (kept failing).
    expect(quality.workflowId).toBe(check.id);
    expect(quality.openedAt).toEqual(at('02:18'));
    expect(quality.severity).toBe('critical');
    expect(quality.escalatedAt).toEqual(at('02:33'));
    expect(quality.status).toBe('resolved');
    expect(quality.resolvedAt).toEqual(at('09:08'));

    const story = async (alertId: number, destination: string) =>
      (await notificationStory(t.db, alertId)).filter((n) => n.destination === destination && isNotifiedKind(n.kind)).map((n) => n.kind);
    for (const destination of ['slack:CACME', `slack:${PLATFORM}`]) {
      expect(await story(pipeline.id, destination)).toEqual(['opened', 'run_requested', 'run_finished', 'resolved']);
      // Escalated, nobody took it: the on-call is paged again, backing off (30 min, 30 min, 1 h, 2 h), until the recovery.
      expect(await story(quality.id, destination)).toEqual(['opened', 'escalated', 'reminder', 'reminder', 'reminder', 'reminder', 'resolved']);
    }
    const resolved = (await notificationStory(t.db, pipeline.id)).find((n) => n.kind === 'resolved')!;
    expect(resolved.data).toMatchObject({ durationSeconds: (9 * 60 - (2 * 60 + 12)) * 60, trigger: 'manual' });
    const opened = (await notificationStory(t.db, pipeline.id)).find((n) => n.kind === 'opened')!;
    expect(opened.data).toMatchObject({ severity: 'critical', consecutiveFailures: 1, stage: 'load', noLauncher: false });
    const escalated = (await notificationStory(t.db, quality.id)).find((n) => n.kind === 'escalated')!;
    expect(escalated.data).toMatchObject({ from: 'warning', to: 'critical', reason: 'kept_failing' });
    // Nothing else was said: no other kinds, every row still pending for the sender.
    const all = await t.db.selectFrom('notifications').select(['status']).execute();
    expect(new Set(all.map((n) => n.status))).toEqual(new Set(['pending']));
  });
});
