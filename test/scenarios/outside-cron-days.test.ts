import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';

/**
 * An observed job whose days Vixie cron and cronie read by crontab(5): day of
 * month and day of week both given, one starting with `*`, means both must
 * match. `0 12 *∕2 * 1` runs on odd days that are Mondays (9 and 23 March
 * 2026), not on every odd day and every Monday: the bot expecting the
 * Wednesday the 11th recorded it missed, a failure, and a daily job's first
 * failure pages.
 */

let t: TestDatabase;
let engine: Engine;

beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

const CRON = '0 12 */2 * 1';
const report = (status: 'running' | 'succeeded', externalId: string) => reportRun(engine.deps, { tenant: 'acme', workflow: 'odd-mondays', status, externalId }, {});

async function rows(workflowId: number) {
  const all = await t.db.selectFrom('runs').select(['tick', 'status']).where('workflowId', '=', workflowId).orderBy('tick').execute();
  return all.map((r) => `${r.tick?.toISOString().slice(0, 16)} ${r.status}`);
}

describe('an observed job whose day of month starts with * and names a weekday', () => {
  it('is expected on the days cron runs it only: nothing missed on the odd days between, a silent odd Monday still missed', async () => {
    engine = createEngine(t.db, '2026-03-09T11:50:00Z');
    // Loaded like the workflows file: its first tick is the next fire time.
    const file = { tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows: [{ tenant: 'acme', name: 'odd-mondays', cron: CRON, mode: 'observed' }] };
    await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(file)), engine.clock.now(), {});
    const wf = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'odd-mondays').executeTakeFirstOrThrow();
    expect(wf.nextTickAt).toEqual(new Date('2026-03-09T12:00:00Z'));
    await engine.step();
    await stepUntil(engine, new Date('2026-03-09T12:00:30Z'));
    await report('running', 'r1');
    await stepUntil(engine, new Date('2026-03-09T12:05:00Z'));
    await report('succeeded', 'r1');
    await stepUntil(engine, new Date('2026-03-09T12:45:00Z'));
    // Wednesday the 11th: cron does not run it, and nothing is missed.
    engine.clock.set(new Date('2026-03-11T11:50:00Z'));
    await stepUntil(engine, new Date('2026-03-11T12:45:00Z'));
    expect(await rows(wf.id)).toEqual(['2026-03-09T12:00 succeeded']);
    const after = await t.db.selectFrom('workflows').select('nextTickAt').where('id', '=', wf.id).executeTakeFirstOrThrow();
    expect(after.nextTickAt).toEqual(new Date('2026-03-23T12:00:00Z'));
    expect(await t.db.selectFrom('alerts').selectAll().execute()).toEqual([]);
    // Monday the 23rd, odd: a day cron runs it, so no report is a missed tick.
    engine.clock.set(new Date('2026-03-23T11:50:00Z'));
    await stepUntil(engine, new Date('2026-03-23T12:45:00Z'));
    expect(await rows(wf.id)).toEqual(['2026-03-09T12:00 succeeded', '2026-03-23T12:00 missed']);
  });
});
