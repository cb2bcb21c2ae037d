import { describe, expect, it } from 'vitest';
import { eventText, plainEventText } from '../../src/notify/event-text.js';
import { eventMrkdwn } from '../../src/slack/blocks/event-text.js';

/** The dependency events in words (src/notify/event-text/dependencies.ts), through the one eventText model. */
const AT = new Date('2026-03-10T02:57:00Z');
const alert = {
  severity: 'critical' as const,
  consecutiveFailures: 1,
  openedAt: new Date('2026-03-10T02:08:00Z'),
  resolvedAt: null,
  ownerTeam: 'engineering' as const,
  ownerUser: null,
  errorGroup: null,
  lastError: null,
  silencedUntil: null,
  silencedBy: null,
  silenceReason: null,
};
const say = (kind: string, data: Record<string, unknown>, workflow = 'warehouse-load') => eventText({ event: { kind, actor: null, at: AT, data }, alert, workflow: { name: workflow } });

describe('dependency events', () => {
  it('upstream_affected names every affected workflow of the tenant with its counts, and only counts other tenants', () => {
    const text = say('upstream_affected', {
      upstreamAlertId: 12,
      affected: [
        { tenant: 'acme', workflow: 'orders-mart', since: '2026-03-10T02:10:00Z', failures: 2, missed: 0 },
        { tenant: 'acme', workflow: 'heartbeat', since: '2026-03-10T02:15:00Z', failures: 0, missed: 1 },
        { tenant: 'acme', workflow: 'finance-ledger', since: '2026-03-10T02:34:00Z', failures: 1, missed: 1 },
      ],
      otherTenants: 2,
    });
    expect(text.what).toBe('upstream_affected');
    expect(plainEventText(text)).toBe(
      'Also affected (5 downstream workflows, no alerts of their own while this one is open): orders-mart (2 failures), heartbeat (1 missed tick), finance-ledger (1 failure, 1 missed tick) and 2 workflows of other tenants.',
    );
  });

  it('escapes hostile workflow names for Slack', () => {
    const text = say('upstream_affected', { affected: [{ workflow: '<!channel> *x*', failures: 1, missed: 0 }], otherTenants: 0 });
    const mrkdwn = eventMrkdwn(text);
    expect(mrkdwn).not.toContain('<!channel>');
    expect(mrkdwn).toContain('&lt;!channel&gt;');
  });

  it('outlived_upstream says which incident it outlived and when that recovered; another tenant is not named', () => {
    const own = say('outlived_upstream', { upstreamAlertId: 12, upstreamWorkflow: 'warehouse-load', upstreamResolvedAt: '2026-03-10T04:01:00Z' }, 'finance-ledger');
    expect(plainEventText(own)).toBe('finance-ledger outlived its upstream incident: warehouse-load recovered at 2026-03-10 04:01 UTC, and this workflow kept failing past its own threshold.');
    const other = say('outlived_upstream', { upstreamAlertId: 12, upstreamOtherTenant: true, upstreamResolvedAt: '2026-03-10T04:01:00Z' }, 'finance-ledger');
    expect(plainEventText(other)).toContain("another tenant's workflow recovered");
  });

  it('outlived_upstream does not say the upstream recovered when its incident ended otherwise', () => {
    const ended = (by: string) => plainEventText(say('outlived_upstream', { upstreamAlertId: 12, upstreamWorkflow: 'warehouse-load', upstreamResolvedAt: '2026-03-10T04:01:00Z', upstreamEndedBy: by }, 'orders-mart'));
    expect(ended('workflow_deleted')).toBe('orders-mart outlived its upstream incident: warehouse-load was deleted at 2026-03-10 04:01 UTC, and this workflow kept failing past its own threshold.');
    expect(ended('workflow_disabled')).toContain('warehouse-load was disabled at');
    expect(ended('tenant_disabled')).toContain("warehouse-load's tenant was disabled at");
    expect(ended('hand')).toContain("warehouse-load's alert was resolved by hand at");
  });

  it('upstream_broke links the already open alert to the upstream incident', () => {
    const text = say('upstream_broke', { upstreamAlertId: 12, upstreamWorkflow: 'warehouse-load' }, 'orders-mart');
    expect(plainEventText(text)).toBe('Upstream warehouse-load now has an alert of its own (alert #12). This alert stays open; failures here may follow from it.');
  });

  it('reads old or partial data without throwing', () => {
    expect(plainEventText(say('upstream_affected', {}))).toBe('Also affected: downstream workflows, with no alerts of their own while this one is open.');
  });
});
