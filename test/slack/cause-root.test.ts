import { describe, expect, it } from 'vitest';
import { renderAlertRoot, type AlertCard } from '../../src/slack/blocks/alert-card.js';

/** The root of an alert a cause opened (no failure): it says what, from its opening, and stays true as it is re-rendered. */

const OPENED = new Date('2026-03-10T03:00:00Z');

function card(cause: string, data: Record<string, unknown>): AlertCard {
  const alert = {
    id: 5, status: 'open', severity: 'warning', openedAt: OPENED, escalateAt: null, escalatedAt: null, resolvedAt: null, cadenceSeconds: 86_400,
    consecutiveFailures: 0, lastError: null, errorGroup: null, errorGroupCount: 0, stage: null, ownerTeam: 'engineering', ownerUser: null,
    ownerNote: null, acknowledgedBy: null, silencedUntil: null, silencedBy: null, silenceReason: null, cause,
  } as AlertCard['alert'];
  return {
    alert,
    workflow: { id: 7, name: 'nightly', cron: '0 2 * * *', timezone: 'Europe/Berlin' },
    tenant: { id: 'acme', name: 'Acme' },
    lastRun: null,
    hasLauncher: true,
    opening: { kind: 'opened', actor: null, at: OPENED, data: { cause: { kind: cause, ...data } } },
  };
}

describe('an alert a cause opened: its root says what', () => {
  it('running long: how long against its usual time, and the timeout as a time, not "in 5 hours" hours later', () => {
    const m = renderAlertRoot(card('running_long', { runId: 12, runningSeconds: 3600, normal: { medianSeconds: 1200, samples: 6 }, timeoutAt: '2026-03-10T08:00:00Z' }), new Date('2026-03-10T07:00:00Z'));
    expect(m.text).toMatch(/^Warning \(open\): Acme \/ nightly, running long: run #12 has been running for 1h; it usually takes 20m \(median of the last 6 successful runs\)/);
    expect(m.text).toContain('It times out 2026-03-10 08:00 UTC.');
    expect(m.text).not.toMatch(/in \d+ hours?/);
  });

  it('completion deadline: the tick and the deadline on the deadline zone\'s clock, and the run still going', () => {
    const m = renderAlertRoot(card('completion_missed', { runId: 3, tick: '2026-03-10T01:00:00Z', deadline: '2026-03-10T05:00:00Z', completeBy: '06:00 Europe/Berlin', running: true }), OPENED);
    expect(m.text).toContain('no success for the tick of 2026-03-10 02:00 Europe/Berlin by its deadline, 2026-03-10 06:00 Europe/Berlin; run #3 is still running.');
    expect(JSON.stringify(m.blocks)).toContain('06:00 Europe/Berlin');
  });

  it('an alert failures opened says its failures, as before: no cause sentence', () => {
    const c = card('running_long', {});
    const m = renderAlertRoot({ ...c, alert: { ...c.alert, cause: null, consecutiveFailures: 2, lastError: 'boom' }, opening: null }, OPENED);
    expect(m.text).toBe('Warning (open): Acme / nightly, 2 failures. Last error: boom');
  });
});
