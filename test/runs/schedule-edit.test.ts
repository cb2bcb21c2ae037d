import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/env.js';
import { parseWorkflowsFile, workflowSchema } from '../../src/config/workflows-file.js';
import { nextTickAfterEdit } from '../../src/domain/schedule.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { putWorkflow } from '../../src/services/workflows-api.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeTenant } from '../helpers/factories.js';
import { recordingReplica } from './support.js';

/**
 * A cron or zone edited while the stored next tick is due and not yet taken
 * (the scheduler claims a moment after the tick's second): the tick both
 * schedules share still fires, once.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterAll(() => t.drop());
beforeEach(async () => {
  await sql`truncate runs cascade`.execute(t.db);
  await t.db.deleteFrom('workflows').execute();
});

const launcher = { kind: 'command' as const, command: 'true' };
const ticksOf = async (name: string) =>
  (await t.db.selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select(['runs.tick', 'runs.status']).where('workflows.name', '=', name).orderBy('runs.tick').execute()).map(
    (r) => `${r.tick!.toISOString().slice(11, 16)} ${r.status}`,
  );

describe('a schedule edited in the same second as a due tick', () => {
  it('over the API: hourly → every two hours at 02:00:00.300, before the scheduler claimed 02:00, still fires 02:00 once', async () => {
    const clock = new ManualClock('2026-03-10T01:30:00Z');
    const deps = { db: t.db, clock, config: loadConfig({}) };
    expect((await putWorkflow(deps, workflowSchema.parse({ tenant: 'acme', name: 'hourly', cron: '0 * * * *', launcher }), {})).kind).toBe('created');
    clock.set('2026-03-10T02:00:00.300Z');
    expect((await putWorkflow(deps, workflowSchema.parse({ tenant: 'acme', name: 'hourly', cron: '0 */2 * * *', launcher }), {})).kind).toBe('updated');
    await fireDueTicks(recordingReplica(t.db, clock).deps);
    expect(await ticksOf('hourly')).toEqual(['02:00 running']);
    const w = await t.db.selectFrom('workflows').select('nextTickAt').where('name', '=', 'hourly').executeTakeFirstOrThrow();
    expect(w.nextTickAt!.toISOString()).toBe('2026-03-10T04:00:00.000Z');
  });

  it('in the workflows file at a restart: the due tick the new schedule shares fires; one it lacks is not invented', async () => {
    const file = (shared: string, other: string) =>
      parseWorkflowsFile(
        JSON.stringify({
          tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
          workflows: [
            { tenant: 'acme', name: 'shared', cron: shared, launcher },
            { tenant: 'acme', name: 'other', cron: other, launcher },
          ],
        }),
      );
    await syncWorkflowsFile(t.db, file('0 * * * *', '0 * * * *'), at('2026-03-10T01:30:00Z'));
    const clock = new ManualClock('2026-03-10T02:00:00.300Z');
    await syncWorkflowsFile(t.db, file('0 2 * * *', '30 * * * *'), clock.now());
    await fireDueTicks(recordingReplica(t.db, clock).deps);
    expect(await ticksOf('shared')).toEqual(['02:00 running']);
    expect(await ticksOf('other')).toEqual([]);
    const next = await t.db.selectFrom('workflows').select(['name', 'nextTickAt']).orderBy('name').execute();
    expect(next.map((w) => `${w.name} ${w.nextTickAt!.toISOString()}`)).toEqual(['other 2026-03-10T02:30:00.000Z', 'shared 2026-03-11T02:00:00.000Z']);
  });

  it('nextTickAfterEdit: a due stored tick the new schedule shares is kept; otherwise the next fire time after now', () => {
    const now = at('2026-03-10T02:00:00.300Z');
    expect(nextTickAfterEdit('0 */2 * * *', 'UTC', at('2026-03-10T02:00:00Z'), now).toISOString()).toBe('2026-03-10T02:00:00.000Z');
    expect(nextTickAfterEdit('30 * * * *', 'UTC', at('2026-03-10T02:00:00Z'), now).toISOString()).toBe('2026-03-10T02:30:00.000Z');
    // Not yet due: the new schedule's next fire time.
    expect(nextTickAfterEdit('0 */2 * * *', 'UTC', at('2026-03-10T03:00:00Z'), now).toISOString()).toBe('2026-03-10T04:00:00.000Z');
    // 02:00 in Berlin is 01:00 UTC: a zone edit moves the tick.
    expect(nextTickAfterEdit('0 2 * * *', 'Europe/Berlin', at('2026-03-10T02:00:00Z'), now).toISOString()).toBe('2026-03-11T01:00:00.000Z');
    expect(nextTickAfterEdit('0 2 * * *', 'UTC', null, now).toISOString()).toBe('2026-03-11T02:00:00.000Z');
  });
});
