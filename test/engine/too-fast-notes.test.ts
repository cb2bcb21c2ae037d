import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine } from '../helpers/engine-harness.js';
import { at, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * "Too fast to be real" in an open alert's thread is a note that says why a
 * success counted, told once per alert like a new error group (it was told
 * at every too-fast run: every five minutes for a five-minute check).
 */

let t: TestDatabase;
let engine: Engine;
beforeEach(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  engine = createEngine(t.db, at('2026-03-10T06:00:00Z'));
});
afterEach(async () => t.drop());

describe('too fast in an open alert', () => {
  it('in an alert another error opened, the first too-fast run is told once (not also as a new error group); later ones, and its return after the error, are counted only', async () => {
    const quick = await makeWorkflow(t.db, { name: 'quick', cron: '0 * * * *', policy: JSON.stringify({ minDurationSeconds: 60, alertAfter: 1, retries: 0 }) });
    const ended = async (tick: string, seconds: number, error?: string) => {
      const start = at(tick);
      const outcome = error ? { status: 'failed' as const, attemptStatus: 'failed' as const, error } : { status: 'succeeded' as const, attemptStatus: 'succeeded' as const };
      await t.db
        .insertInto('runs')
        .values(newRunRow({ workflowId: quick.id, tick: start, trigger: 'schedule', ...outcome, startedAt: start, finishedAt: new Date(start.getTime() + seconds * 1000), durationSeconds: seconds }))
        .execute();
      engine.clock.set(new Date(start.getTime() + seconds * 1000));
      await pollFinishedRuns(engine.deps);
    };
    await ended('2026-03-10T07:00:00Z', 120, 'connection refused');
    await ended('2026-03-10T08:00:00Z', 2);
    await ended('2026-03-10T09:00:00Z', 2);
    await ended('2026-03-10T10:00:00Z', 120, 'connection refused');
    await ended('2026-03-10T11:00:00Z', 2);
    const kinds = (await t.db.selectFrom('alertEvents').select('kind').orderBy('id').execute()).map((e) => e.kind);
    expect(kinds).toEqual(['opened', 'failure_recorded', 'too_fast', 'failure_recorded', 'failure_recorded', 'failure_recorded']);
  });
});
