import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { destinationId, parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { pagerKeysConfiguredNowhere } from '../../src/services/pager-key-guard.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';

// A PagerDuty key removed while open alerts' incidents live on it: their resolve could never reach them,
// and their escalation would open a second incident on the key that replaced it. Refused, naming the key's id.
const KEY_A = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const ADMIN = 'admin-token-0123456789abcdef';
const pager = (routingKey: string, extra: Record<string, unknown> = {}) => ({ kind: 'pagerduty', routingKey, ...extra });
const idA = destinationId(pager(KEY_A) as never, undefined);
const config = { PLATFORM_CHANNEL: undefined };

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

const fileWith = (destinations: unknown[]) =>
  parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: 'C0ACME', destinations }], workflows: [0, 1].map((i) => ({ tenant: 'acme', name: `nightly-${i}`, cron: '0 2 * * *' })) }));

/** An open critical alert of acme whose trigger went to KEY_A (its row settled `sent` as the PagerDuty transport settles it). */
async function openIncidentOnA(count = 1): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const name = `nightly-${i}`;
    const wf = (await t.db.selectFrom('workflows').selectAll().where('tenantId', '=', 'acme').where('name', '=', name).executeTakeFirst()) ?? (await makeWorkflow(t.db, { tenantId: 'acme', name, cron: '0 2 * * *', source: 'api' }));
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: T0, escalateAt: null });
    await addEvent(t.db, alert.id, 'opened', { now: T0, data: { severity: 'critical' } });
    const row = await t.db.updateTable('notifications').set({ status: 'sent', sentAt: T0, result: JSON.stringify({ dedupKey: `scheduler-bot:alert:${alert.id}`, configuredBy: 'tenant' }) as never })
      .where('alertId', '=', alert.id).where('destination', '=', idA).returning('id').executeTakeFirst();
    expect(row).toBeDefined();
    ids.push(alert.id);
  }
  return ids;
}

describe('the workflows file removing a PagerDuty key that holds open incidents', () => {
  it('is refused naming the destination id, the tenant and how many open alerts, never the key; nothing is synced', async () => {
    await syncWorkflowsFile(t.db, fileWith([pager(KEY_A)]), T0, {}, config);
    await openIncidentOnA(2);
    const error = await syncWorkflowsFile(t.db, fileWith([pager(KEY_B)]), T0, {}, config).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowsFileError);
    const message = (error as Error).message;
    expect(message).toContain(`tenants[0].destinations (tenant acme): PagerDuty destination ${idA} holds the incidents of 2 open alerts`);
    expect(message).toContain('"retired": true');
    expect(message).not.toContain(KEY_A);
    expect(message).not.toContain(KEY_B);
    const stored = await t.db.selectFrom('tenants').select('destinations').where('id', '=', 'acme').executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.destinations)).toContain(KEY_A);
    expect(JSON.stringify(stored.destinations)).not.toContain(KEY_B);
  });

  it('kept as retired beside the new key, it syncs; once its alerts resolved, removing it syncs', async () => {
    await syncWorkflowsFile(t.db, fileWith([pager(KEY_A)]), T0, {}, config);
    const [alertId] = await openIncidentOnA();
    await syncWorkflowsFile(t.db, fileWith([pager(KEY_B), pager(KEY_A, { retired: true })]), T0, {}, config);
    await t.db.updateTable('alerts').set({ status: 'resolved', resolvedAt: T0 }).where('id', '=', alertId!).execute();
    await syncWorkflowsFile(t.db, fileWith([pager(KEY_B)]), T0, {}, config);
  });

  it('a key the platform also configures (PLATFORM_DESTINATIONS) still reaches its incidents: removing it from the tenant syncs', async () => {
    const withPlatform = { PLATFORM_CHANNEL: undefined, PLATFORM_DESTINATIONS: [pager(KEY_A)] as never };
    await syncWorkflowsFile(t.db, fileWith([pager(KEY_A)]), T0, {}, withPlatform);
    await openIncidentOnA();
    await syncWorkflowsFile(t.db, fileWith([]), T0, {}, withPlatform);
  });
});

describe('PUT /api/v1/tenants/{id} removing a PagerDuty key that holds open incidents', () => {
  it('answers 409 naming the destination id and the count, never the key; retired beside the new one, 200', async () => {
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'C0ACME', source: 'api', destinations: JSON.stringify([pager(KEY_A)]) });
    await openIncidentOnA();
    const app = await startTestApp(t, { API_TOKEN: ADMIN });
    try {
      const admin = apiClient(app.url, ADMIN);
      const refused = await admin('PUT', '/api/v1/tenants/acme', { name: 'Acme', channel: 'C0ACME', destinations: [pager(KEY_B)] });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe('pager_key_held');
      expect(refused.body.message).toContain(`body.destinations: PagerDuty destination ${idA} holds the incidents of 1 open alert:`);
      expect(refused.body.message).toContain('"retired": true');
      expect(refused.text).not.toContain(KEY_A);
      expect(refused.text).not.toContain(KEY_B);
      const stored = await t.db.selectFrom('tenants').select('destinations').where('id', '=', 'acme').executeTakeFirstOrThrow();
      expect(JSON.stringify(stored.destinations)).not.toContain(KEY_B);
      const kept = await admin('PUT', '/api/v1/tenants/acme', { name: 'Acme', channel: 'C0ACME', destinations: [pager(KEY_B), pager(KEY_A, { retired: true })] });
      expect(kept.status).toBe(200);
    } finally {
      await app.stop();
    }
  });
});

describe('a PLATFORM_DESTINATIONS key removed at a restart', () => {
  it('cannot be refused: the start warns, naming the destination id and how many open alerts hold incidents there', async () => {
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'C0ACME', destinations: JSON.stringify([]) });
    await openIncidentOnAFromPlatform();
    expect(await pagerKeysConfiguredNowhere(t.db, { PLATFORM_CHANNEL: undefined, PLATFORM_DESTINATIONS: [pager(KEY_A)] as never })).toEqual([]);
    const lines = await pagerKeysConfiguredNowhere(t.db, { PLATFORM_CHANNEL: undefined, PLATFORM_DESTINATIONS: [] });
    expect(lines).toEqual([
      `PagerDuty destination ${idA} (PLATFORM_DESTINATIONS) holds the incidents of 1 open alert (tenant acme) and is configured nowhere now: their escalation opens a second incident on any new key and their resolve cannot reach them. Put it back with "retired": true until they resolve (or resolve them in PagerDuty)`,
    ]);
    expect(lines.join('\n')).not.toContain(KEY_A);
  });
});

async function openIncidentOnAFromPlatform(): Promise<void> {
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: T0, escalateAt: null });
  const event = await addEvent(t.db, alert.id, 'opened', { now: T0, data: { severity: 'critical' } });
  await t.db.insertInto('notifications').values({
    alertId: alert.id, eventId: event.id, destination: idA, idempotencyKey: `k-${alert.id}`, status: 'sent', nextAttemptAt: T0, leaseOwner: null, leaseExpiresAt: null,
    result: JSON.stringify({ dedupKey: `scheduler-bot:alert:${alert.id}`, configuredBy: 'platform' }) as never, lastError: null, createdAt: T0, sentAt: T0,
  }).execute();
}
