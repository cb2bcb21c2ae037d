import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowsFile } from '../../src/config/workflows-file.js';
import { webhookDestinationId } from '../../src/config/destination-schema.js';
import { alertView } from '../../src/notify/alert-view.js';
import { pagerDutyAction } from '../../src/notify/transports/pagerduty.js';
import { renderAlertRoot } from '../../src/slack/blocks/alert-card.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createKeyedEngine, PLATFORM, reportRun, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';

/** Issue 17: shadow mode evaluates and records as usual, and tells only the audit destination (the platform channel). */
const START = new Date('2026-03-10T00:00:00Z');
const HOUR = 3_600_000;
let ROUTING: { PLATFORM_CHANNEL: string; destinationIdKey: string };

let t: TestDatabase;
let engine: Engine;
let webhookId: string;

beforeEach(async () => {
  t = await createTestDatabase();
  // The tenant has a webhook: its id is a digest under the database's key (src/config/destination-schema.ts).
  engine = await createKeyedEngine(t.db, START);
  ROUTING = { PLATFORM_CHANNEL: PLATFORM, destinationIdKey: engine.deps.config.destinationIdKey! };
  webhookId = webhookDestinationId('https://hooks.acme.example/alerts', ROUTING.destinationIdKey);
});
afterEach(async () => t.drop());

function file(shadow: { tenant?: boolean; workflow?: boolean }): WorkflowsFile {
  return {
    tenants: [
      {
        id: 'acme',
        name: 'Acme',
        channel: 'CACME',
        destinations: [{ kind: 'webhook', url: 'https://hooks.acme.example/alerts', secret: 'whsec-0123456789abcdef' }],
        ...(shadow.tenant !== undefined ? { shadow: shadow.tenant } : {}),
      },
    ],
    workflows: [{ tenant: 'acme', name: 'hourly-export', cron: '0 * * * *', timezone: 'UTC', monitoring: true, paused: false, enabled: true, ...(shadow.workflow !== undefined ? { shadow: shadow.workflow } : {}) }],
  } as WorkflowsFile;
}

async function failTwice() {
  const wf = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
  for (const hour of [1, 2]) {
    const tick = new Date(START.getTime() + hour * HOUR);
    engine.clock.set(new Date(tick.getTime() + minutes(2)));
    await reportRun(t.db, wf, tick, { status: 'failed', error: 'export to s3 failed' }, engine.clock.now());
    await engine.drain();
  }
  return t.db.selectFrom('alerts').selectAll().executeTakeFirstOrThrow();
}

const rowsOf = (alertId: number) =>
  t.db
    .selectFrom('notifications')
    .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
    .select(['notifications.destination', 'alertEvents.kind'])
    .where('notifications.alertId', '=', alertId)
    .orderBy('notifications.id')
    .execute();

describe('shadow mode', () => {
  for (const scope of ['tenant', 'workflow'] as const) {
    it(`${scope} in shadow: the alert opens and is recorded, and only the platform channel hears of it`, async () => {
      await syncWorkflowsFile(t.db, file({ [scope]: true }), START, {}, ROUTING);
      const alert = await failTwice();
      expect(alert).toMatchObject({ status: 'open', consecutiveFailures: 2 });
      const rows = await rowsOf(alert.id);
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.destination))).toEqual(new Set([`slack:${PLATFORM}`]));
    });
  }

  it('the root says it is shadow', async () => {
    await syncWorkflowsFile(t.db, file({ tenant: true }), START, {}, ROUTING);
    const alert = await failTwice();
    const workflow = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
    const tenant = await t.db.selectFrom('tenants').selectAll().executeTakeFirstOrThrow();
    const view = alertView({ alert, workflow, tenant }, engine.clock.now());
    expect(view.headline).toMatch(/^Shadow · /);
    expect(view.policyVersion).toBe(1);
    const root = renderAlertRoot({ alert, workflow, tenant, lastRun: null, hasLauncher: false }, engine.clock.now());
    expect(JSON.stringify(root.blocks)).toContain('*Policy*\\nv1');
    expect(alertView({ alert, workflow: { ...workflow, shadow: false }, tenant: { ...tenant, shadow: false } }, engine.clock.now()).headline).not.toMatch(/Shadow/);
  });

  it('going live does not replay history: each open alert gets one went_live event, the tenant channel and destinations start from it', async () => {
    await syncWorkflowsFile(t.db, file({ tenant: true }), START, {}, ROUTING);
    const alert = await failTwice();
    const before = await rowsOf(alert.id);

    await syncWorkflowsFile(t.db, file({ tenant: false }), engine.clock.now(), {}, ROUTING);
    await syncWorkflowsFile(t.db, file({ tenant: false }), engine.clock.now(), {}, ROUTING); // nothing more on a re-sync
    const after = (await rowsOf(alert.id)).slice(before.length);
    expect(after.map((r) => r.kind)).toEqual(['went_live', 'went_live', 'went_live']);
    expect(after.map((r) => r.destination).sort()).toEqual(['slack:CACME', `slack:${PLATFORM}`, webhookId]);

    // From now on the tenant's channel hears everything, like any live alert.
    const wf = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
    const tick = new Date(START.getTime() + 3 * HOUR);
    engine.clock.set(new Date(tick.getTime() + minutes(2)));
    await reportRun(t.db, wf, tick, { status: 'succeeded' }, engine.clock.now());
    await engine.drain();
    const resolved = (await rowsOf(alert.id)).filter((r) => r.kind === 'resolved').map((r) => r.destination).sort();
    expect(resolved).toEqual(['slack:CACME', `slack:${PLATFORM}`, webhookId]);
  });

  it("a critical alert going live pages the tenant's PagerDuty (its first event there), which later hears the resolution", async () => {
    const withPager = (shadow: boolean): WorkflowsFile => {
      const f = file({ tenant: shadow });
      f.tenants[0]!.destinations = [{ kind: 'pagerduty', routingKey: 'R0123456789abcdef0123456789abcdef' }] as never;
      f.workflows[0]!.policy = { firstSeverity: 'critical' };
      return f;
    };
    await syncWorkflowsFile(t.db, withPager(true), START, {}, ROUTING);
    const alert = await failTwice();
    expect(alert.severity).toBe('critical');
    expect((await rowsOf(alert.id)).map((r) => r.destination)).not.toContainEqual(expect.stringMatching(/^pagerduty:/));

    await syncWorkflowsFile(t.db, withPager(false), engine.clock.now(), {}, ROUTING);
    const pager = (await rowsOf(alert.id)).filter((r) => r.destination.startsWith('pagerduty:'));
    expect(pager.map((r) => r.kind)).toEqual(['went_live']);
    expect(pagerDutyAction({ kind: 'went_live', actor: null, data: {} })).toBe('trigger');

    const wf = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
    const tick = new Date(START.getTime() + 3 * HOUR);
    engine.clock.set(new Date(tick.getTime() + minutes(2)));
    await reportRun(t.db, wf, tick, { status: 'succeeded' }, engine.clock.now());
    await engine.drain();
    expect((await rowsOf(alert.id)).filter((r) => r.destination.startsWith('pagerduty:')).map((r) => r.kind)).toEqual(['went_live', 'resolved']);
  });

  it('an alert put in shadow while open: the channel and destinations that heard it still hear its resolution, and nothing else', async () => {
    await syncWorkflowsFile(t.db, file({ tenant: false }), START, {}, ROUTING);
    const alert = await failTwice();
    expect(new Set((await rowsOf(alert.id)).map((r) => r.destination))).toEqual(new Set(['slack:CACME', `slack:${PLATFORM}`, webhookId]));
    await syncWorkflowsFile(t.db, file({ tenant: true }), engine.clock.now(), {}, ROUTING);
    const before = (await rowsOf(alert.id)).length;

    const wf = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
    for (const [hour, status] of [[3, 'failed'], [4, 'succeeded']] as const) {
      const tick = new Date(START.getTime() + hour * HOUR);
      engine.clock.set(new Date(tick.getTime() + minutes(2)));
      await reportRun(t.db, wf, tick, status === 'failed' ? { status, error: 'export to s3 failed' } : { status }, engine.clock.now());
      await engine.drain();
    }
    const after = (await rowsOf(alert.id)).slice(before);
    expect(after.filter((r) => r.kind !== 'resolved').map((r) => r.destination)).toEqual(expect.arrayContaining([`slack:${PLATFORM}`]));
    expect(after.filter((r) => r.kind !== 'resolved').every((r) => r.destination === `slack:${PLATFORM}`)).toBe(true);
    expect(after.filter((r) => r.kind === 'resolved').map((r) => r.destination).sort()).toEqual(['slack:CACME', `slack:${PLATFORM}`, webhookId]);
  });
});
