import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { endDestinationTest, recordEvent, startDestinationRig, type DestinationRig } from './rig.js';

/**
 * A page's words off Slack (docs/alerts.md, "A page that reaches nobody"):
 * Slack picks the rung paged at send time from its directory, which email,
 * the webhook and PagerDuty cannot ask. So they name the rung the page starts
 * at by role and say that Slack falls back, never "Paging @alice" about a
 * person Slack may pass over.
 */
let t: TestDatabase;
let rig: DestinationRig | undefined;
beforeAll(async () => void (t = await createTestDatabase()));
afterAll(async () => t.drop());
afterEach(async () => {
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

async function pageOffSlack(mention: { users: string[]; groups: string[] }, owner: string | null) {
  rig = await startDestinationRig(t.db, { env: { PLATFORM_CHANNEL: 'C0PLATFORM' } });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'C0ACME', oncall: JSON.stringify({ group: 'S0ONCALL' }), destinations: JSON.stringify(rig.destinations()) });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *' });
  const alert = await insertAlert(t.db, wf.id, { severity: 'warning', openedAt: T0, escalateAt: null, ...(owner ? { ownerUser: owner } : {}) });
  await recordEvent(t.db, rig.config, alert.id, 'escalated', { now: T0, changes: { severity: 'critical', escalatedAt: T0 }, data: { mention } });
  await rig.drain();
  const mail = rig.smtp.received.map((m) => m.text).join('\n');
  const hook = rig.webhook.requests.map((r) => JSON.parse(r.body).text.sentence as string).join('\n');
  const pager = rig.pagerduty.requests.map((r) => JSON.parse(r.body).payload.summary as string).join('\n');
  return { mail, hook, pager };
}

describe('a page told by email, webhook and PagerDuty', () => {
  it('an owner’s page: "the alert’s owner in Slack", not the name Slack may pass over', async () => {
    const { mail, hook, pager } = await pageOffSlack({ users: ['U0ALICE'], groups: [] }, 'U0ALICE');
    for (const text of [mail, hook, pager]) {
      expect(text).toContain("Paging the alert's owner in Slack; if Slack finds they reach nobody, the thread there says who is paged instead.");
      expect(text).not.toContain('Paging @U0ALICE');
    }
  });

  it('the tenant’s on-call: named by role the same way', async () => {
    const { mail, hook, pager } = await pageOffSlack({ users: [], groups: ['S0ONCALL'] }, null);
    for (const text of [mail, hook, pager]) {
      expect(text).toContain("Paging the tenant's on-call in Slack; if Slack finds they reach nobody, the thread there says who is paged instead.");
      expect(text).not.toContain('@S0ONCALL');
    }
  });
});
