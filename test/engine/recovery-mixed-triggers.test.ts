import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, fireTick, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

/**
 * DESIGN.md core idea 7 with recoverAfter 3: a scheduled success, a tick recovered by its retry and a manual
 * run each count towards the successes in a row; a failed manual run between them starts the count again;
 * the resolution records the time from opening.
 */
const START = new Date('2026-03-10T00:00:00Z');
const HOUR = 3_600_000;
const hour = (n: number) => new Date(START.getTime() + n * HOUR);

let t: TestDatabase;
let engine: Engine;
let wf: Workflow;

beforeEach(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, START);
  await makeTenant(t.db);
  wf = await makeWorkflow(t.db, { name: 'hourly', cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }), policy: JSON.stringify({ recoverAfter: 3 }) });
});
afterEach(async () => t.drop());

const alert = () => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id', 'desc').executeTakeFirstOrThrow();

/** A tick whose attempts end as given, a minute apart (retries launched at once by the poller). */
async function tick(n: number, ...attempts: ('ok' | 'fail')[]) {
  engine.clock.set(hour(n));
  for (const a of attempts) engine.launcher.script(wf.id, a === 'ok' ? { status: 'succeeded', afterMs: minutes(1) } : { status: 'failed', error: 'load failed: connection reset', afterMs: minutes(1) });
  await fireTick(engine, wf, hour(n));
  for (let i = 0; i < attempts.length + 1; i++) {
    engine.clock.advance(minutes(1));
    await engine.drain();
  }
}

async function manual(at: Date, status: 'succeeded' | 'failed') {
  engine.clock.set(at);
  await reportRun(t.db, wf, null, status === 'failed' ? { status, error: 'load failed: connection reset', trigger: 'manual' } : { status, trigger: 'manual' }, at);
  await engine.drain();
}

describe('recoverAfter counts every kind of success, and a failure between starts it again', () => {
  it('scheduled, retried and manual successes resolve it; a failed manual run resets the streak', async () => {
    await tick(1, 'fail', 'fail', 'fail');
    await tick(2, 'fail', 'fail', 'fail');
    const opened = await alert();
    expect(opened).toMatchObject({ status: 'open', consecutiveFailures: 2 });

    await tick(3, 'ok');
    await manual(new Date(hour(3).getTime() + minutes(20)), 'succeeded');
    expect(await alert()).toMatchObject({ status: 'open', healthyStreak: 2 });
    await manual(new Date(hour(3).getTime() + minutes(30)), 'failed');
    expect(await alert()).toMatchObject({ status: 'open', healthyStreak: 0, consecutiveFailures: 2 });

    await tick(4, 'fail', 'ok'); // recovered on its retry: a success
    await manual(new Date(hour(4).getTime() + minutes(20)), 'succeeded');
    expect(await alert()).toMatchObject({ status: 'open', healthyStreak: 2 });
    await tick(5, 'ok');
    const resolved = await alert();
    expect(resolved).toMatchObject({ status: 'resolved' });
    const event = await t.db.selectFrom('alertEvents').select('data').where('alertId', '=', resolved.id).where('kind', '=', 'resolved').executeTakeFirstOrThrow();
    expect(event.data).toMatchObject({ durationSeconds: Math.round((resolved.resolvedAt!.getTime() - opened.openedAt.getTime()) / 1000), successes: 3, recoverAfter: 3 });
  });
});
