import { describe, expect, it } from 'vitest';
import { reportLimitMessage, windowLimitRefusal, workflowLimitRefusal } from '../../src/domain/tenant-limits.js';

describe('workflowLimitRefusal', () => {
  it.each([
    [0, 3, false],
    [2, 3, false],
    [3, 3, true],
    // The file or the admin token may have put it past the limit: still refused, never negative.
    [7, 3, true],
  ])('%i enabled under a limit of %i: refused %s', (enabled, limit, refused) => {
    const refusal = workflowLimitRefusal('acme', enabled, limit);
    expect(refusal !== undefined).toBe(refused);
    if (refusal) {
      expect(refusal.limit).toBe(limit);
      expect(refusal.message).toContain(`MAX_WORKFLOWS_PER_TENANT=${limit}`);
      expect(refusal.message).toContain('tenant acme');
    }
  });
});

describe('reportLimitMessage', () => {
  it('names the tenant, the variable with its value and the wait', () => {
    expect(reportLimitMessage('acme', 12000, 2)).toBe('tenant acme reported more runs than it may in a minute (TENANT_REPORTS_PER_MINUTE=12000); retry after 2 s');
  });
});

describe('windowLimitRefusal', () => {
  it('refuses at the limit, naming it; allows below', () => {
    expect(windowLimitRefusal('acme', 199, 200)).toBeUndefined();
    expect(windowLimitRefusal('acme', 200, 200)?.message).toContain('MAX_MAINTENANCE_WINDOWS_PER_TENANT=200');
  });
});
