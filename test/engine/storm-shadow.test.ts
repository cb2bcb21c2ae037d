import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun, type Engine } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes } from '../helpers/factories.js';

/**
 * A tenant in shadow is told only to the audit destination, the platform
 * channel (docs/policies.md): its alerts change nothing for anyone else. Its
 * burst of openings there is no storm, and takes no live tenant's alert off
 * its own root into a storm message (where it would lose its Shadow marking
 * and be listed among live alerts).
 */
const TICK = new Date('2026-03-10T02:00:00Z');
const at = (m: number) => new Date(TICK.getTime() + minutes(m));

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  t = await createTestDatabase();
  engine = createEngine(t.db, at(1));
  await makeTenant(t.db, { id: 'trial', name: 'Trial', channel: 'CTRIAL', shadow: true });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  const policy = JSON.stringify({ alertAfter: 1, retries: 0 });
  for (let i = 0; i < 6; i++) {
    const wf = await makeWorkflow(t.db, { tenantId: 'trial', name: `trial-${i}`, cron: '0 * * * *', policy });
    await reportRun(t.db, wf, TICK, { status: 'failed', error: 'trial failure' }, at(1));
  }
  const live = await makeWorkflow(t.db, { tenantId: 'acme', name: 'billing', cron: '0 * * * *', policy });
  await reportRun(t.db, live, TICK, { status: 'failed', error: 'card processor down' }, at(1));
  await engine.drain();
});
afterAll(async () => {
  await t.drop();
});

describe('storms and shadow', () => {
  it("a shadow tenant's burst on the platform channel starts no storm there, and the live alert keeps its own root", async () => {
    const alerts = await t.db.selectFrom('alerts').select('id').execute();
    expect(alerts).toHaveLength(7);
    const platformOpenings = await t.db
      .selectFrom('notifications as n')
      .innerJoin('alertEvents as e', 'e.id', 'n.eventId')
      .select('n.alertId')
      .where('e.kind', '=', 'opened')
      .where('n.destination', '=', 'slack:CPLATFORM')
      .execute();
    expect(platformOpenings).toHaveLength(7); // the audit destination hears all of them
    expect(await t.db.selectFrom('storms').select('destination').execute()).toEqual([]);
    expect(await t.db.selectFrom('stormAlerts').select('alertId').execute()).toEqual([]);
  });

  it('a live burst in the same window makes a storm of the live alerts alone; the shadow openings keep their own roots', async () => {
    engine.clock.set(at(61));
    const policy = JSON.stringify({ alertAfter: 1, retries: 0 });
    const live: number[] = [];
    for (let i = 0; i < 5; i++) {
      const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: `load-${i}`, cron: '0 * * * *', policy });
      await reportRun(t.db, wf, at(60), { status: 'failed', error: 'warehouse unreachable' }, at(61));
    }
    for (let i = 0; i < 3; i++) {
      const wf = await makeWorkflow(t.db, { tenantId: 'trial', name: `trial-more-${i}`, cron: '0 * * * *', policy });
      await reportRun(t.db, wf, at(60), { status: 'failed', error: 'trial failure' }, at(61));
    }
    await engine.drain();
    for (const a of await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.id').where('workflows.name', 'like', 'load-%').execute()) live.push(Number(a.id));
    const platform = await t.db.selectFrom('storms').select('id').where('destination', '=', 'slack:CPLATFORM').executeTakeFirstOrThrow();
    const members = await t.db.selectFrom('stormAlerts').select('alertId').where('stormId', '=', platform.id).execute();
    expect(members.map((m) => Number(m.alertId)).sort((a, b) => a - b)).toEqual(live.sort((a, b) => a - b));
  });
});
