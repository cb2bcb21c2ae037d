import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withUpstreamLink } from '../../src/slack/transport/upstream-replies.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';

/** `upstream_broke` / `outlived_upstream` replies link to the upstream's thread, or to its storm message when it sits in a storm. */
let t: TestDatabase;
let upstreamId: number;

async function openAlert(workflowId: number): Promise<number> {
  const row = await t.db
    .insertInto('alerts')
    .values({ workflowId, generation: 1, status: 'open', severity: 'critical', openedAt: T0, escalatedAt: null, escalateAt: null, resolvedAt: null, cadenceSeconds: 300, policy: JSON.stringify({}) as never, consecutiveFailures: 3, lastError: 'boom', errorGroup: null, errorGroupFirstAt: null, errorGroupLastAt: null, stage: null, firstRunId: null, lastRunId: null, ownerUser: null, ownerNote: null, acknowledgedBy: null, acknowledgedAt: null, silencedUntil: null, silencedBy: null, silenceReason: null, resolvedByRunId: null, updatedAt: T0, flappingSince: null } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const reply = { text: 'upstream broke', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'upstream broke' } }] } as never;
const linkText = async (kind: string) => {
  const m = await withUpstreamLink(t.db, reply, kind, { upstreamAlertId: upstreamId }, 'slack:CACME');
  return JSON.stringify(m.blocks.slice(1));
};

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  const wf = await makeWorkflow(t.db, { name: 'warehouse-load' });
  upstreamId = await openAlert(wf.id);
});
afterAll(async () => {
  await t.drop();
});

describe('the upstream link on dependency replies', () => {
  it('links to the storm message when the upstream alert sits in a storm', async () => {
    expect(await linkText('upstream_broke')).toBe('[]');
    const storm = await t.db
      .insertInto('storms')
      .values({ destination: 'slack:CACME', channel: 'CACME', startedAt: T0, lastJoinedAt: T0, endedAt: null, rootTs: '1773108000.000100', rootClaimedAt: null, renderedEventId: null, renderedAt: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db.insertInto('stormAlerts').values({ stormId: storm.id, alertId: upstreamId, destination: 'slack:CACME', joinedAt: T0 }).execute();
    for (const kind of ['upstream_broke', 'outlived_upstream']) {
      expect(await linkText(kind)).toContain('https://slack.com/archives/CACME/p1773108000000100');
    }
  });

  it('prefers the upstream alert own thread (it outlived the storm)', async () => {
    await t.db.insertInto('alertThreads').values({ alertId: upstreamId, destination: 'slack:CACME', channel: 'CACME', rootTs: '1773109000.000200', rootKey: 'k', renderedEventId: 1, createdAt: T0 }).execute();
    const text = await linkText('upstream_broke');
    expect(text).toContain('https://slack.com/archives/CACME/p1773109000000200');
    expect(text).not.toContain('p1773108000000100');
  });
});
