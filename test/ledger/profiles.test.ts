import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { profileOf } from '../../src/ledger/profiles.js';

const AT = new Date('2026-03-10T02:00:00Z');

describe('profileOf: the replica’s one memo of profileFor', () => {
  it.each([
    ['an hourly job', { cron: '0 * * * *', timezone: 'UTC', policy: {} }],
    ['a weekday job in Berlin', { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', policy: {} }],
    ['with overrides', { cron: '*/5 * * * *', timezone: 'UTC', policy: { alertAfter: 7, minRows: 10 } }],
  ])('%s: the same answer as profileFor', (_case, workflow) => {
    expect(profileOf(workflow, AT)).toEqual(profileFor(workflow.cron, workflow.timezone, workflow.policy, AT));
  });

  it('an edited policy or schedule is a new key: never a stale profile', () => {
    const workflow = { cron: '0 * * * *', timezone: 'UTC', policy: { alertAfter: 2 } };
    expect(profileOf(workflow, AT).alertAfter).toBe(2);
    expect(profileOf({ ...workflow, policy: { alertAfter: 4 } }, AT).alertAfter).toBe(4);
    expect(profileOf({ ...workflow, cron: '0 2 * * *' }, AT).cadenceSeconds).toBe(86_400);
  });
});
