import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { escalateDueWarnings } from '../../src/engine/escalation.js';
import { escalationDue } from '../../src/domain/escalation.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';

/**
 * The escalation clock's claim reads only the due warnings through an index
 * (migration 0020, ESCALATION_DUE_AT): its SQL must pick exactly the
 * warnings the domain rule calls due, or a warning would never escalate.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
});
afterAll(() => t.drop());

const NOW = new Date(T0.getTime() + 3_600_000);
const past = new Date(NOW.getTime() - 60_000);
const ahead = new Date(NOW.getTime() + 60_000);

const cases: { name: string; policy: Record<string, unknown>; failures: number; escalateAt: Date | null; acknowledged?: boolean; severity?: 'warning' | 'critical' }[] = [
  { name: 'deadline passed', policy: { escalateAfterFailures: 6 }, failures: 3, escalateAt: past },
  { name: 'deadline at this instant', policy: { escalateAfterFailures: 6 }, failures: 3, escalateAt: NOW },
  { name: 'deadline ahead, failures below', policy: { escalateAfterFailures: 6 }, failures: 5, escalateAt: ahead },
  { name: 'deadline ahead, kept failing', policy: { escalateAfterFailures: 6 }, failures: 6, escalateAt: ahead },
  { name: 'no deadline, kept failing', policy: { escalateAfterFailures: 2 }, failures: 4, escalateAt: null },
  { name: 'no deadline, failures below', policy: { escalateAfterFailures: 9 }, failures: 4, escalateAt: null },
  { name: 'an old snapshot without a threshold: only the deadline', policy: {}, failures: 50, escalateAt: ahead },
  { name: 'a threshold written as a string', policy: { escalateAfterFailures: '3' }, failures: 3, escalateAt: ahead },
  { name: 'a threshold that is not a number', policy: { escalateAfterFailures: 'soon' }, failures: 3, escalateAt: ahead },
  { name: 'acknowledged: never', policy: { escalateAfterFailures: 1 }, failures: 3, escalateAt: past, acknowledged: true },
  { name: 'already critical: never', policy: { escalateAfterFailures: 1 }, failures: 3, escalateAt: past, severity: 'critical' },
];

describe('the escalation claim agrees with escalationDue', () => {
  it.each(cases)('$name', async ({ policy, failures, escalateAt, acknowledged, severity }) => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme' });
    const alert = await insertAlert(t.db, wf.id, {
      severity: severity ?? 'warning',
      openedAt: T0,
      escalateAt,
      consecutiveFailures: failures,
      policy: JSON.stringify(policy),
      ...(acknowledged ? { ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', acknowledgedAt: T0 } : {}),
    });
    const expected = escalationDue(alert, NOW).due;
    expect(await escalateDueWarnings({ db: t.db, config: loadConfig({ LOG_LEVEL: 'silent' }) }, NOW)).toBe(expected ? 1 : 0);
    const after = await t.db.selectFrom('alerts').select('severity').where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(after.severity).toBe(expected || severity === 'critical' ? 'critical' : 'warning');
  });
});
