import { afterEach, beforeEach, expect, it } from 'vitest';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

it('a run that throws downstream is marked processed and not taken again; the rest of its batch is still handled', async () => {
  const engine = createEngine(t.db, '2026-03-10T02:05:00Z');
  await makeTenant(t.db);
  // A cron that slipped past validation (written by hand): profiling it throws.
  const broken = await makeWorkflow(t.db, { name: 'broken', cron: '61 * * * *' });
  const fine = await makeWorkflow(t.db, { name: 'fine', cron: '0 2 * * *' });
  const bad = await reportRun(t.db, broken, new Date('2026-03-10T02:00:00Z'), { status: 'failed', error: 'x' }, engine.clock.now());
  await reportRun(t.db, fine, new Date('2026-03-10T02:00:00Z'), { status: 'failed', error: 'disk full' }, engine.clock.now());

  expect(await pollFinishedRuns(engine.deps)).toBe(true);
  expect(await t.db.selectFrom('alerts').select('workflowId').execute()).toEqual([{ workflowId: fine.id }]);
  const after = await t.db.selectFrom('runs').selectAll().where('id', '=', bad.id).executeTakeFirstOrThrow();
  expect(after.processedAt).not.toBeNull();
  expect(after.errorGroup).toBeNull(); // never routed: the fault was isolated, not half-applied
  expect(await pollFinishedRuns(engine.deps)).toBe(false);
});
