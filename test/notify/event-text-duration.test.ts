import { describe, expect, it } from 'vitest';
import type { Alert, AlertEvent, Tenant, Workflow } from '../../src/db/schema.js';
import { alertView } from '../../src/notify/alert-view.js';
import { eventText, plainEventText } from '../../src/notify/event-text.js';
import { renderAlertReply, renderAlertRoot, type AlertCard } from '../../src/slack/blocks/alert-card.js';

/** The run-duration events (issue 16) in words, and the root of an alert a duration cause opened. */
const NOW = new Date('2026-03-10T03:00:00Z');
const alert = (over: Partial<Alert> = {}) =>
  ({ id: 42, workflowId: 7, status: 'open', severity: 'warning', openedAt: NOW, escalateAt: null, escalatedAt: null, resolvedAt: null, cadenceSeconds: 86_400, consecutiveFailures: 0, lastError: null, errorGroup: null, errorGroupCount: 0, stage: null, ownerTeam: 'engineering', ownerUser: null, ownerNote: null, acknowledgedBy: null, silencedUntil: null, silencedBy: null, silenceReason: null, cause: null, ...over }) as Alert;
const workflow = { id: 7, name: 'nightly', cron: '0 2 * * *', timezone: 'UTC' } as Workflow;
const tenant = { id: 'acme', name: 'Acme' } as Tenant;

const say = (kind: string, data: Record<string, unknown>, over: Partial<Alert> = {}) => {
  const event = { id: 1, alertId: 42, kind, actor: null, at: NOW, data } as AlertEvent;
  return { model: eventText({ event, alert: alert(over), workflow }), event };
};

const long = { runId: 12, startedAt: '2026-03-10T02:00:00.000Z', runningSeconds: 3600, afterSeconds: 3600, normal: { medianSeconds: 1200, samples: 7 }, timeoutAt: '2026-03-10T08:00:00.000Z' };
const missed = { tick: '2026-03-10T01:00:00.000Z', deadline: '2026-03-10T05:00:00.000Z', runId: 7, status: 'running', running: true };

describe('run-duration events in words', () => {
  it.each([
    ['running long', 'running_long', long, 'Running long: run #12 has been running for 1h; it usually takes 20m (median of the last 7 successful runs). It times out in 5 hours (at 2026-03-10 08:00 UTC).'],
    ['running long past a set limit', 'running_long', { ...long, normal: null, afterSeconds: 900 }, 'Running long: run #12 has been running for 1h; the limit set for it is 15m. It times out in 5 hours (at 2026-03-10 08:00 UTC).'],
    ['completion missed, still running', 'completion_missed', missed, 'Completion deadline missed: no success for the tick of 2026-03-10 01:00 UTC by its deadline, 2026-03-10 05:00 UTC; run #7 is still running.'],
    ['completion missed, nothing started', 'completion_missed', { ...missed, runId: null, status: null, running: false }, 'Completion deadline missed: no success for the tick of 2026-03-10 01:00 UTC by its deadline, 2026-03-10 05:00 UTC; no run started.'],
    ['too fast', 'too_fast', { runId: 9, error: 'too fast: finished in 3s, expected at least 60s' }, "Too fast to be real: run #9 succeeded faster than the workflow's minimum duration, so it counts as a failure."],
  ])('%s', (_name, kind, data, sentence) => {
    expect(plainEventText(say(kind, data).model)).toBe(sentence);
  });

  it('a completion deadline in Kathmandu is told on Kathmandu\'s clock, named, and in Slack beside the reader\'s own time', () => {
    // 02:00 and 06:00 NPT (+05:45): 20:15 and 00:15 UTC.
    const data = { ...missed, tick: '2026-03-09T20:15:00.000Z', deadline: '2026-03-10T00:15:00.000Z', completeBy: '06:00 Asia/Kathmandu' };
    const { model, event } = say('completion_missed', data);
    expect(plainEventText(model)).toBe('Completion deadline missed: no success for the tick of 2026-03-10 02:00 Asia/Kathmandu by its deadline, 2026-03-10 06:00 Asia/Kathmandu; run #7 is still running.');
    const card: AlertCard = { alert: alert(), workflow: { ...workflow, timezone: 'Asia/Kathmandu' }, tenant, lastRun: null, hasLauncher: true };
    const reply = JSON.stringify(renderAlertReply(event, card, NOW).blocks);
    expect(reply).toContain('2026-03-10 06:00 Asia/Kathmandu (<!date^1773101700^{date_short_pretty} {time}|2026-03-10 00:15 UTC> your time)');
  });

  it('an opening names its duration cause instead of a count of failures, and pages like a failure when critical', () => {
    const { model } = say('opened', { severity: 'critical', consecutiveFailures: 0, cause: { kind: 'completion_missed', ...missed }, mention: { users: [], groups: ['S0ONCALL'] } }, { severity: 'critical' });
    expect(plainEventText(model)).toBe(
      'Critical alert opened: nightly missed its completion deadline: no success for the tick of 2026-03-10 01:00 UTC by its deadline, 2026-03-10 05:00 UTC; run #7 is still running. Paging @S0ONCALL.',
    );
    expect(model.mention).toEqual({ users: [], groups: ['S0ONCALL'] });
    expect(plainEventText(say('opened', { severity: 'warning', consecutiveFailures: 0, cause: { kind: 'running_long', ...long } }).model)).toMatch(/^Alert opened: nightly is running long: run #12 has been running for 1h; it usually takes 20m/);
  });

  it('the root of an alert a cause opened says why, not "0 failures"; the Slack reply renders the sentence', () => {
    const a = alert({ cause: 'running_long' });
    expect(alertView({ alert: a, workflow, tenant }, NOW).headline).toBe('Warning (open): Acme / nightly, running long');
    const card: AlertCard = { alert: a, workflow, tenant, lastRun: null, hasLauncher: true };
    expect(JSON.stringify(renderAlertRoot(card, NOW).blocks)).toContain('*Opened for*\\nrunning long');
    const { event } = say('running_long', long);
    expect(renderAlertReply(event, card, NOW).text).toContain('Running long: run #12 has been running for 1h; it usually takes 20m');
    // Once failures are counted, the root counts them again.
    expect(alertView({ alert: alert({ cause: 'running_long', consecutiveFailures: 1 }), workflow, tenant }, NOW).headline).toBe('Warning (open): Acme / nightly, 1 failure');
  });
  it('the root of a flapping alert (one opened by failing intermittently counts one failure in a row) says it flaps; resolved, it does not', () => {
    const flapping = alert({ consecutiveFailures: 1, flappingSince: NOW });
    expect(alertView({ alert: flapping, workflow, tenant }, NOW).headline).toBe('Warning (open): Acme / nightly, 1 failure, flapping');
    expect(alertView({ alert: { ...flapping, status: 'resolved', resolvedAt: NOW }, workflow, tenant }, NOW).headline).toBe('Resolved: Acme / nightly');
  });
  it('an escalation of an alert with no failures (a run still running) does not count "0 consecutive failures"', () => {
    const deadline = plainEventText(say('escalated', { consecutiveFailures: 0, reason: 'deadline' }).model);
    expect(deadline).toBe('Escalated to critical. Nobody took ownership before the deadline.');
    expect(plainEventText(say('escalated', { consecutiveFailures: 0, reason: 'kept_failing' }).model)).toBe(deadline);
    expect(plainEventText(say('escalated', { consecutiveFailures: 3, reason: 'kept_failing' }).model)).toBe('Escalated to critical after 3 consecutive failures. Nobody has taken ownership.');
  });
});

describe('/scheduler status and the App Home', () => {
  it('show the normal duration, how long a run has been going, and a cause instead of "0 failures"', async () => {
    const { renderStatusList } = await import('../../src/slack/blocks/status.js');
    const { renderHome } = await import('../../src/slack/blocks/home.js');
    const row = {
      tenantId: 'acme',
      name: 'nightly',
      cron: '0 2 * * *',
      timezone: 'UTC',
      paused: false,
      monitoring: true,
      mode: 'managed',
      nextTickAt: null,
      lastRun: { status: 'running', finishedAt: null, startedAt: new Date('2026-03-10T02:00:00Z'), runningLong: true },
      openAlert: { id: 42, severity: 'warning', ownerUser: null, silenced: false, consecutiveFailures: 0, cause: 'running_long' },
      normalSeconds: 1200,
    };
    const text = JSON.stringify(renderStatusList([row], 'Acme').blocks);
    expect(text).toContain('running since <!date^1773108000^');
    expect(text).toContain('(usually 20m), *running long*');
    expect(text).toContain('alert #42, running long, unowned');
    const home = JSON.stringify(renderHome({ tenants: [{ id: 'acme', name: 'Acme', alerts: [{ id: 42, workflowName: 'nightly', severity: 'warning', openedAt: NOW, consecutiveFailures: 0, cause: 'completion_missed', ownerTeam: 'engineering', ownerUser: null, silenced: null }] }], dead: [] }, NOW).blocks);
    expect(home).toContain('· completion missed ·');
  });
});
