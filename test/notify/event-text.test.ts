import { describe, expect, it } from 'vitest';
import type { Alert, AlertEvent, Tenant, Workflow } from '../../src/db/schema.js';
import { eventText, eventTextFields, plainEventText } from '../../src/notify/event-text.js';
import type { DeliveryInput } from '../../src/notify/transport.js';
import { alertFacts } from '../../src/notify/transports/alert-facts.js';
import { renderAlertEmail } from '../../src/notify/transports/email-message.js';
import { pagerDutyAction, pagerDutyEvent } from '../../src/notify/transports/pagerduty.js';
import { webhookPayload } from '../../src/notify/transports/webhook.js';
import { renderAlertReply, type AlertCard } from '../../src/slack/blocks/alert-card.js';

/**
 * Every event kind in every destination, generated from the one event model
 * (src/notify/event-text.ts): the snapshots are what people read, and the
 * agreement test pins that no destination tells a different story.
 */
const NOW = new Date('2026-03-10T09:05:00Z');
const OPENED = new Date('2026-03-10T02:03:00Z');

const alert = (over: Partial<Alert> = {}): Alert =>
  ({
    id: 42,
    workflowId: 7,
    generation: 1,
    status: 'open',
    severity: 'warning',
    openedAt: OPENED,
    escalateAt: new Date('2026-03-10T09:45:00Z'),
    escalatedAt: null,
    resolvedAt: null,
    cadenceSeconds: 300,
    consecutiveFailures: 3,
    lastError: 'connection refused to warehouse:5432',
    errorGroup: 'e3b0c442',
    errorGroupCount: 3,
    errorGroupFirstAt: OPENED,
    errorGroupLastAt: NOW,
    stage: 'load',
    ownerTeam: 'engineering',
    ownerUser: null,
    ownerNote: null,
    acknowledgedBy: null,
    acknowledgedAt: null,
    silencedUntil: null,
    silencedBy: null,
    silenceReason: null,
    lastRunId: null,
    policy: {},
    ...over,
  }) as Alert;
const workflow = { id: 7, name: 'quality-check', cron: '*/5 * * * *', timezone: 'Europe/Berlin' } as Workflow;
const tenant = { id: 'acme', name: 'Acme Analytics', channel: 'CACME', destinations: [], oncall: { group: 'S0ONCALL' } } as unknown as Tenant;

type Case = [name: string, kind: string, actor: string | null, data: Record<string, unknown>, alert?: Partial<Alert>];
const resolvedAlert = { status: 'resolved', resolvedAt: NOW } as Partial<Alert>;
const CASES: Case[] = [
  ['opened warning', 'opened', null, { severity: 'warning', consecutiveFailures: 3, escalateAt: '2026-03-10T09:45:00.000Z' }],
  ['opened critical, 1 failure', 'opened', null, { severity: 'critical', consecutiveFailures: 1 }, { severity: 'critical', consecutiveFailures: 1 }],
  ['escalated, kept failing, pages the owner', 'escalated', null, { reason: 'kept_failing', consecutiveFailures: 5, mention: { users: ['U0ALICE'], groups: [] } }, { severity: 'critical', ownerUser: 'U0ALICE' }],
  ['escalated at the deadline, pages on-call', 'escalated', null, { reason: 'deadline', consecutiveFailures: 3, mention: { users: [], groups: ['S0ONCALL'] } }, { severity: 'critical' }],
  ['escalated by hand', 'escalated', 'U0BOB', {}, { severity: 'critical' }],
  ['escalated as the ownership lapsed on unanswered reminders, past the deadline', 'escalated', null, { reason: 'deadline', consecutiveFailures: 48, mention: { users: [], groups: ['S0ONCALL'] }, lapsed: { previousUser: 'U0ALICE', ownedSince: '2026-03-10T05:05:00.000Z', reason: 'unanswered', reminders: 3 } }, { severity: 'critical' }],
  ["escalated as the tenant's ownership limit passed, kept failing", 'escalated', null, { reason: 'kept_failing', consecutiveFailures: 6, mention: { users: [], groups: ['S0ONCALL'] }, lapsed: { previousUser: 'U0ALICE', ownedSince: '2026-03-10T03:05:00.000Z' } }, { severity: 'critical' }],
  ['reminder, owned', 'reminder', null, { about: 'owned', ownerUser: 'U0ALICE', since: '2026-03-10T06:05:00.000Z' }, { ownerUser: 'U0ALICE' }],
  ['reminder, critical and unowned: pages on-call again', 'reminder', null, { about: 'unowned', since: '2026-03-10T06:05:00.000Z', mention: { users: ['U0PAGER'], groups: ['S0ONCALL'] } }, { severity: 'critical' }],
  ['reminder, silenced', 'reminder', null, { about: 'silenced', since: '2026-03-08T09:05:00.000Z' }, { silencedBy: 'U0BOB' }],
  ['ownership expired', 'ownership_expired', null, { previousUser: 'U0ALICE', ownedSince: '2026-03-10T05:05:00.000Z' }],
  ['ownership lapsed on unanswered reminders, critical: pages on-call', 'ownership_expired', null, { previousUser: 'U0ALICE', ownedSince: '2026-03-07T05:05:00.000Z', reason: 'unanswered', reminders: 3, mention: { users: [], groups: ['S0ONCALL'] } }, { severity: 'critical' }],
  ['owner changed: take', 'owner_changed', 'U0ALICE', { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE', note: null, acknowledged: true }, { ownerUser: 'U0ALICE' }],
  ['owner changed: release', 'owner_changed', 'U0ALICE', { fromTeam: 'engineering', fromUser: 'U0ALICE', toTeam: 'engineering', toUser: null, note: null, acknowledged: false }],
  [
    'owner changed: reassign to a named user',
    'owner_changed',
    'U0BOB',
    { fromTeam: 'engineering', fromUser: 'U0ALICE', toTeam: 'customer', toUser: 'U0CUST', note: 'your credentials expired', acknowledged: true },
    { ownerTeam: 'customer', ownerUser: 'U0CUST' },
  ],
  ['owner changed: reassign to someone else in the team', 'owner_changed', 'U0BOB', { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0CAROL', note: null, acknowledged: true }],
  ['silenced until a time', 'silenced', 'U0BOB', { until: '2026-03-10T13:05:00.000Z', reason: 'vendor outage' }],
  ['silenced until resolved', 'silenced', 'U0BOB', { until: null, reason: null }],
  ['unsilenced by a person', 'unsilenced', 'U0BOB', { why: 'unsilenced', summary: { counts: [{ kind: 'escalated', count: 1 }, { kind: 'failure_recorded', count: 4 }], escalated: true, consecutiveFailures: 7, severity: 'critical' } }],
  ['silence expired', 'unsilenced', null, { why: 'expired', summary: { counts: [{ kind: 'failure_recorded', count: 1 }], escalated: false, consecutiveFailures: 1, severity: 'warning' } }],
  ['resolved by a run', 'resolved', null, { runId: 78, successes: 3, durationSeconds: 25_320 }, resolvedAlert],
  ['resolved by a tick\'s late report', 'resolved', null, { runId: 79, successes: 1, durationSeconds: 1800, lateReport: { afterGraceSeconds: 1800, graceToCoverSeconds: 4500 } }, resolvedAlert],
  ['resolved by hand', 'resolved', 'U0BOB', { by: 'hand', note: 'fixed upstream, see INC-12' }, resolvedAlert],
  ['resolved: workflow disabled', 'resolved', null, { by: 'workflow_disabled' }, resolvedAlert],
  ['resolved: workflow removed from the file', 'resolved', null, { by: 'workflow_disabled', how: 'removed_from_file' }, resolvedAlert],
  ['resolved: workflow deleted', 'resolved', null, { by: 'workflow_deleted', heldWhileSilenced: { counts: [{ kind: 'escalated', count: 1 }] } }, resolvedAlert],
  ['resolved: tenant removed', 'resolved', null, { by: 'tenant_disabled' }, resolvedAlert],
  ['resolved: tenant removed over the API', 'resolved', 'api:admin', { by: 'tenant_disabled' }, resolvedAlert],
  ['maintenance ended', 'maintenance_ended', null, { startedAt: '2026-03-10T07:05:00.000Z', endedAt: '2026-03-10T09:05:00.000Z', reason: 'warehouse upgrade', failures: 3, missed: 1, scope: 'workflow' }],
  ['tenant maintenance ended, quiet', 'maintenance_ended', null, { startedAt: '2026-03-10T08:35:00.000Z', endedAt: '2026-03-10T09:05:00.000Z', failures: 0, missed: 0, scope: 'tenant' }],
  ['workflow paused', 'workflow_paused', 'U0BOB', { reason: 'migrating the warehouse' }],
  ['workflow resumed', 'workflow_resumed', 'U0BOB', {}],
  ['flapping', 'flapping', null, { transitions: 4, window: 10, recoverAfter: 3 }],
  ['error group changed', 'error_group_changed', null, { from: 'e3b0c442', to: 'f00d', error: 'disk full' }],
  ['run requested', 'run_requested', 'U0ALICE', { runId: 77, by: 'U0ALICE' }],
  ['run finished: failed', 'run_finished', 'U0ALICE', { runId: 77, status: 'failed', error: 'exit 1: <!channel> boom' }],
  ['run finished: succeeded', 'run_finished', 'U0ALICE', { runId: 78, status: 'succeeded' }],
  ['run finished late, after its timeout: succeeded', 'run_finished', null, { runId: 79, status: 'timed_out', tick: '2026-03-10T02:00:00.000Z', late: { status: 'succeeded', error: null, lateSeconds: 841 } }],
  ['run finished late, after its timeout: failed', 'run_finished', null, { runId: 80, status: 'timed_out', late: { status: 'failed', error: 'OOMKilled <!channel>', lateSeconds: 1201 } }],
  ['opened critical, pages on-call', 'opened', null, { severity: 'critical', consecutiveFailures: 1, mention: { users: ['U0CAROL'], groups: ['S0ONCALL'] } }, { severity: 'critical', consecutiveFailures: 1 }],
  [
    'opened failing intermittently',
    'opened',
    null,
    { severity: 'warning', consecutiveFailures: 1, escalateAt: '2026-03-10T09:45:00.000Z', intermittent: { failures: 5, window: 10, transitions: 9, recoverAfter: 3 } },
    { consecutiveFailures: 1 },
  ],
];

function render([, kind, actor, data, over]: Case) {
  const a = alert(over);
  const event = { id: 900, alertId: a.id, kind, actor, at: NOW, data } as AlertEvent;
  const model = eventText({ event, alert: a, workflow });
  // Email, webhook and PagerDuty cannot ask Slack whom a name reaches: a page names its rung by role there.
  const offSlack = eventText({ event, alert: a, workflow, offSlack: { tenantOnCall: { group: 'S0ONCALL' } } });
  const card: AlertCard = { alert: a, workflow, tenant, lastRun: null, hasLauncher: true };
  const slack = renderAlertReply(event, card, NOW);
  const facts = alertFacts({ alert: a, workflow, tenant, event, lastRun: null }, NOW);
  const email = renderAlertEmail({ facts, tenantName: tenant.name, workflowName: workflow.name, alertId: a.id, event: kind, idempotencyKey: 'k', threadSeverity: 'warning', domain: 'example.com' });
  const input = { notification: { idempotencyKey: 'k' }, target: '', event, alert: a, workflow, tenant, queuedBehind: 0, now: NOW } as unknown as DeliveryInput;
  const webhook = webhookPayload(input, null, undefined);
  const action = pagerDutyAction(event);
  const pd = action ? (pagerDutyEvent(input, 'rk', 'scheduler-bot:alert:1', action, null) as { event_action: string; payload?: { summary: string } }) : undefined;
  return { model, offSlack, slack, email, webhook, pd };
}

/** Slack's section mrkdwn read back as plain text: what a reader sees, markup and emoji aside. */
function slackAsPlain(mrkdwn: string): string {
  return mrkdwn
    .replace(/^:[a-z_]+: /, '')
    .replace(/<!date\^\d+\^[^|]*\|([^>]*)>/g, '$1')
    .replace(/<@([A-Z0-9]+)>/g, '@$1')
    .replace(/<!subteam\^([A-Z0-9]+)>/g, '@$1')
    .replace(/\n> /g, ' Note: ')
    .replace(/[*`]/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe('one event text, every destination', () => {
  it.each(CASES)('%s', (...c) => {
    const { model, offSlack, slack, email, webhook, pd } = render(c as Case);
    expect({
      slack: { section: (slack.blocks[0] as unknown as { text: { text: string } }).text.text, text: slack.text },
      email: email.text.split('\n')[2],
      webhook: { sentence: webhook.text.sentence, what: webhook.text.what },
      pagerduty: pd ? { action: pd.event_action, ...(pd.payload ? { summary: pd.payload.summary } : {}) } : 'nothing sent',
    }).toMatchSnapshot();

    // No two destinations disagree: each shows the same sentence from the same parts (off Slack, a page's
    // names as the rung's role: only Slack knows whom they reach).
    expect(slackAsPlain((slack.blocks[0] as unknown as { text: { text: string } }).text.text)).toBe(plainEventText(model));
    const plain = plainEventText(offSlack);
    if (!model.mention) expect(plain).toBe(plainEventText(model));
    expect(email.text).toContain(`\n${plain}\n`);
    expect(webhook.text).toEqual(eventTextFields(offSlack));
    expect(webhook.summary.endsWith(plain)).toBe(true);
    if (pd?.payload) expect(pd.payload.summary).toBe(`Acme Analytics / quality-check: ${plain}`);
    // The notification text is plain language naming tenant and workflow.
    expect(slack.text.startsWith('Acme Analytics / quality-check: ')).toBe(true);
    expect(slack.text).not.toMatch(/<!date|[*`]|:[a-z_]+:/);
  });

  it('an alert opened by failing intermittently says how many of the last runs failed and how it resolves, in the opening itself', () => {
    const { model } = render(CASES.find(([name]) => name === 'opened failing intermittently')!);
    expect(plainEventText(model)).toContain('quality-check is failing intermittently: 5 of the last 10 runs failed. It will resolve after 3 successes in a row. It escalates to critical');
  });

  it('a reassign is never "took ownership" and never acknowledges PagerDuty, even to a named user', () => {
    for (const c of CASES.filter(([name]) => name.startsWith('owner changed: reassign'))) {
      const { slack, email, pd, model } = render(c);
      expect(model.what).toBe('owner_changed:reassign');
      expect(slack.text).not.toContain('took ownership');
      expect(email.text).not.toContain('took ownership');
      expect(pd).toBeUndefined();
    }
    expect(render(CASES.find(([name]) => name === 'owner changed: take')!).pd?.event_action).toBe('acknowledge');
  });

  it('an escalation carries whom it pages, for the broadcast reply', () => {
    expect(render(CASES[2]!).model.mention).toEqual({ users: ['U0ALICE'], groups: [] });
    expect((render(CASES[3]!).slack.blocks[0] as unknown as { text: { text: string } }).text.text).toContain('Paging <!subteam^S0ONCALL>.');
    expect(render(CASES[4]!).model.mention).toBeUndefined();
  });

  it('an alert that opens critical carries whom it pages too; one that opens without anyone to page names nobody', () => {
    const pages = render(['', 'opened', null, { severity: 'critical', consecutiveFailures: 1, mention: { users: ['U0CAROL'], groups: ['S0ONCALL'] } }, { severity: 'critical' }]);
    expect(pages.model.mention).toEqual({ users: ['U0CAROL'], groups: ['S0ONCALL'] });
    expect(pages.slack.text).toContain('Paging <@U0CAROL> and <!subteam^S0ONCALL>.');
    const nobody = render(['', 'opened', null, { severity: 'critical', consecutiveFailures: 1, mention: { users: [], groups: [] } }, { severity: 'critical' }]);
    expect(nobody.model.mention).toBeUndefined();
    expect(nobody.slack.text).not.toContain('Paging');
  });

  it('reads old rows without the new fields: missing `by` is a run, counts as an object still count', () => {
    expect(render(['', 'resolved', null, { runId: 5 }, resolvedAlert]).model.what).toBe('resolved:run');
    expect(plainEventText(render(['', 'unsilenced', 'U0BOB', { why: 'unsilenced', summary: { counts: { failure_recorded: 2 } } }]).model)).toContain('While silenced: 2 failures recorded.');
  });
});

describe('policy_changed in words', () => {
  it('names the reminder rules, a reminder period of null as the default', () => {
    const changes = [
      { field: 'remindAfterSeconds', from: null, to: 600 },
      { field: 'ownershipLapsesAfterReminders', from: 3, to: 0 },
    ];
    const { model } = render(['', 'policy_changed', null, { from: 2, to: 3, changes, kept: [] }]);
    expect(plainEventText(model)).toBe(
      'Policy changed (v2 → v3): reminder period (seconds) default → 600 and unanswered reminders before the ownership lapses 3 → 0. This alert continues under the new rules.',
    );
  });
});
