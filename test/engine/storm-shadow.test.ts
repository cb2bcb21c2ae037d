import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOutSharedCauses } from '../../src/engine/storm-clock.js';
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

/**
 * The shared-cause callout (docs/alerts.md "Shared cause") by the same rule:
 * an alert in shadow neither counts toward the callout's workflows nor
 * carries it (the callout would hang on a Shadow-marked thread, told to
 * nobody, or a shadow tenant would complete a live tenant's callout).
 */
describe('shared cause and shadow', () => {
  const ERROR = 'object store unreachable: connection reset';
  const policy = JSON.stringify({ alertAfter: 1, retries: 0 });
  const fail = async (tenantId: string, name: string, minute: number) => {
    const wf = await makeWorkflow(t.db, { tenantId, name, cron: '0 * * * *', policy });
    await reportRun(t.db, wf, at(minute - 1), { status: 'failed', error: ERROR }, at(minute));
    return wf;
  };

  it('two live workflows and a shadow one in one error group make no callout', async () => {
    engine.clock.set(at(200));
    await fail('acme', 'export-a', 200);
    await fail('acme', 'export-b', 200);
    await fail('trial', 'trial-export', 200);
    await engine.drain();
    expect(await callOutSharedCauses(engine.deps, at(201))).toBe(0);
    expect(await t.db.selectFrom('sharedCauses').select('errorGroup').execute()).toEqual([]);
    expect(await t.db.selectFrom('alertEvents').select('id').where('kind', '=', 'shared_cause').execute()).toEqual([]);
  });

  it('a third live workflow makes it one: counted without the shadow one, told in the newest live alert, though a shadow alert is newer', async () => {
    engine.clock.set(at(202));
    const third = await fail('acme', 'export-c', 202);
    await engine.drain();
    engine.clock.set(at(203));
    await fail('trial', 'trial-export-2', 203);
    await engine.drain();
    expect(await callOutSharedCauses(engine.deps, at(204))).toBe(1);
    const [called] = await t.db.selectFrom('sharedCauses').select(['workflows', 'tenants', 'alertId']).execute();
    const carrier = await t.db.selectFrom('alerts').select('id').where('workflowId', '=', third.id).executeTakeFirstOrThrow();
    expect(called).toEqual({ workflows: 3, tenants: 1, alertId: carrier.id });
    const event = await t.db.selectFrom('alertEvents').select(['alertId', 'data']).where('kind', '=', 'shared_cause').executeTakeFirstOrThrow();
    expect(event.alertId).toBe(carrier.id);
    const data = event.data as { shadow?: boolean; workflows: { workflow: string }[] };
    expect(data.shadow).toBeUndefined();
    expect(data.workflows.map((w) => w.workflow).sort()).toEqual(['export-a', 'export-b', 'export-c']);
  });
});
