import { plural } from '../../domain/durations.js';
import { date, joinParts, num, person, str, strong, t, type Renderer, type TextPart } from './parts.js';

const maintenanceEnded: Renderer = ({ event, d }) => {
  const start = date(d, 'startedAt');
  const end = date(d, 'endedAt') ?? event.at;
  const failed = num(d, 'failures') ?? 0;
  const missed = num(d, 'missed') ?? 0;
  const reason = str(d, 'reason');
  const inside =
    failed + missed === 0
      ? t(' Nothing failed during it.')
      : t(` During it, ${[failed ? plural(failed, 'failure') : '', missed ? plural(missed, 'missed tick') : ''].filter(Boolean).join(' and ')} ${failed + missed === 1 ? 'was' : 'were'} not held against the workflow.`);
  return {
    what: 'maintenance_ended',
    icon: 'maintenance',
    parts: [
      t(str(d, 'scope') === 'tenant' ? 'Maintenance of the whole tenant ended' : 'Maintenance ended'),
      ...(start ? [t(' after '), { type: 'duration', ms: end.getTime() - start.getTime() } as TextPart] : []),
      ...(reason ? [t(' ('), strong(reason), t(')')] : []),
      t('.'),
      inside,
    ],
  };
};

const pausedOrResumed: Renderer = ({ event, workflow, d }) => {
  const paused = event.kind === 'workflow_paused';
  const reason = str(d, 'reason');
  return {
    what: event.kind,
    icon: paused ? 'paused' : 'resumed',
    parts: [
      person(event.actor),
      t(paused ? ' paused ' : ' resumed '),
      strong(workflow.name),
      t(paused ? '. It does not run, open alerts or escalate until it is resumed; reports still count.' : '. It runs and escalates again.'),
      ...(reason ? [t(` Reason: ${reason}`)] : []),
    ],
  };
};

/** The effective policy's fields in words (policy_changed). */
const POLICY_FIELD_WORDS: Record<string, string> = {
  retries: 'retries per tick',
  alertAfter: 'failures before alerting',
  firstSeverity: 'first severity',
  escalationMultiplier: 'escalation multiplier',
  recoverAfter: 'successes to resolve',
  graceSeconds: 'grace (seconds)',
  timeoutSeconds: 'timeout (seconds)',
  minRows: 'minimum rows',
  minDurationSeconds: 'minimum duration (seconds)',
  runningLongAfterSeconds: 'running long after (seconds)',
  completeBy: 'complete by',
  cadenceSeconds: 'cadence (seconds)',
  escalateAfterFailures: 'failures before escalating',
  overlap: 'overlap',
  catchUpSeconds: 'catch-up window (seconds)',
  remindAfterSeconds: 'reminder period (seconds)',
  ownershipLapsesAfterReminders: 'unanswered reminders before the ownership lapses',
};

/** What a field's null means, where it is not "none" (a reminder period of null doubles from the cadence). */
const NULL_WORDS: Record<string, string> = { remindAfterSeconds: 'default' };

const fieldWords = (field: unknown) => POLICY_FIELD_WORDS[field as string] ?? String(field);
const valueWords = (field: unknown, value: unknown) => String(value ?? NULL_WORDS[field as string] ?? 'none');

const policyChanged: Renderer = ({ d }) => {
  const changes = Array.isArray(d.changes) ? (d.changes as { field?: unknown; from?: unknown; to?: unknown }[]).filter((c) => typeof c.field === 'string') : [];
  const kept = Array.isArray(d.kept) ? (d.kept as { field?: unknown; value?: unknown }[]).filter((c) => typeof c.field === 'string') : [];
  const from = num(d, 'from');
  const to = num(d, 'to');
  return {
    what: 'policy_changed',
    icon: 'info',
    parts: [
      t(`Policy changed${from !== undefined && to !== undefined ? ` (v${from} → v${to})` : ''}`),
      ...(changes.length ? [t(': '), ...joinParts(changes.map((c) => t(`${fieldWords(c.field)} ${valueWords(c.field, c.from)} → ${valueWords(c.field, c.to)}`)))] : []),
      t('. This alert continues under the new rules'),
      // The cadence captured at opening, and what it decides of the escalation, stay this alert's.
      ...(kept.length ? [t(', but keeps what it opened with: '), ...joinParts(kept.map((c) => t(`${fieldWords(c.field)} ${valueWords(c.field, c.value)}`)))] : []),
      t('.'),
    ],
  };
};

const wentLive: Renderer = () => ({ what: 'went_live', icon: 'info', parts: [t('Shadow mode ended: from now on this alert is told to its channel and destinations.')] });

/** What happened to the workflow around the alert: maintenance, pause and resume, policy versions, shadow mode. */
export const workflowTexts = {
  maintenance_ended: maintenanceEnded,
  workflow_paused: pausedOrResumed,
  workflow_resumed: pausedOrResumed,
  policy_changed: policyChanged,
  went_live: wentLive,
} satisfies Record<string, Renderer>;
