import type { Alert, AlertEvent, Run, Tenant, Workflow } from '../../db/schema.js';
import { cadenceInWords, formatDuration, utcText } from '../../slack/blocks/format.js';

/**
 * The facts a Slack root shows, as plain values for destinations that are not
 * Slack (email text and HTML, webhook JSON). Pure: the caller loads the rows
 * and passes `now`. Strings here are raw, possibly hostile text from runs;
 * each renderer escapes for its own medium.
 */
export interface AlertFacts {
  /** "Critical (open): Acme / nightly-pipeline, 4 failures" */
  headline: string;
  /** What this event says, in one sentence. */
  eventLine: string;
  /** A longer text the event carries (a run's error). */
  eventDetail?: string;
  fields: { label: string; value: string }[];
  lastError?: string;
  logExcerpt?: string;
  /** Only plain http(s) URLs. */
  logUrl?: string;
}

export type FactsAlert = Pick<
  Alert,
  | 'id'
  | 'generation'
  | 'status'
  | 'severity'
  | 'openedAt'
  | 'escalateAt'
  | 'escalatedAt'
  | 'resolvedAt'
  | 'cadenceSeconds'
  | 'consecutiveFailures'
  | 'lastError'
  | 'errorGroup'
  | 'errorGroupCount'
  | 'stage'
  | 'ownerTeam'
  | 'ownerUser'
  | 'ownerNote'
  | 'acknowledgedBy'
  | 'silencedUntil'
  | 'silencedBy'
  | 'silenceReason'
>;

export interface FactsInput {
  alert: FactsAlert;
  workflow: Pick<Workflow, 'name' | 'cron' | 'timezone'>;
  tenant: Pick<Tenant, 'id' | 'name'>;
  event: Pick<AlertEvent, 'kind' | 'actor' | 'at' | 'data'>;
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
}

export function severityWord(severity: FactsAlert['severity']): string {
  return severity === 'critical' ? 'Critical' : 'Warning';
}

function silencedNow(a: FactsAlert, now: Date): { until: Date | 'resolved'; by: string } | undefined {
  if (a.status !== 'open' || !a.silencedBy) return undefined;
  if (a.silencedUntil && a.silencedUntil.getTime() <= now.getTime()) return undefined;
  return { until: a.silencedUntil ?? 'resolved', by: a.silencedBy };
}

export function alertFacts(input: FactsInput, now: Date): AlertFacts {
  const { alert: a, workflow, tenant, lastRun } = input;
  const resolvedAfter = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : '?';
  const state = silencedNow(a, now) ? 'silenced' : a.ownerUser || a.acknowledgedBy ? 'owned' : 'open';
  const headline =
    a.status === 'resolved'
      ? `Resolved: ${tenant.name} / ${workflow.name} (after ${resolvedAfter})`
      : `${severityWord(a.severity)} (${state}): ${tenant.name} / ${workflow.name}, ${a.consecutiveFailures} failure${a.consecutiveFailures === 1 ? '' : 's'}`;

  const fields: AlertFacts['fields'] = [
    { label: 'Tenant', value: `${tenant.name} (${tenant.id})` },
    { label: 'Workflow', value: workflow.name },
    { label: 'Cadence', value: `${cadenceInWords(a.cadenceSeconds)} (${workflow.cron}, ${workflow.timezone})` },
    { label: 'Consecutive failures', value: String(a.consecutiveFailures) },
    { label: 'Opened', value: utcText(a.openedAt) },
  ];
  if (a.status === 'resolved' && a.resolvedAt) fields.push({ label: 'Resolved', value: `${utcText(a.resolvedAt)} (after ${resolvedAfter})` });
  else if (a.escalatedAt) fields.push({ label: 'Escalated', value: utcText(a.escalatedAt) });
  else if (a.escalateAt) fields.push({ label: 'Escalates', value: `${utcText(a.escalateAt)}${a.acknowledgedBy ? ' (stopped: owned)' : ''}` });
  fields.push({ label: 'Owner', value: `${a.ownerTeam} · ${a.ownerUser ?? 'nobody yet'}${a.ownerNote ? ` (${a.ownerNote})` : ''}` });
  const s = silencedNow(a, now);
  if (s) fields.push({ label: 'Silenced', value: `${s.until === 'resolved' ? 'until resolved' : `until ${utcText(s.until)}`} by ${s.by}` });
  if (a.errorGroup) fields.push({ label: 'Error group', value: `${a.errorGroup} (${a.errorGroupCount}×)` });
  const stage = a.stage ?? lastRun?.stage;
  if (stage) fields.push({ label: 'Failing stage', value: stage });

  const { line, detail } = eventSentence(input);
  return {
    headline,
    eventLine: line,
    ...(detail ? { eventDetail: detail } : {}),
    fields,
    ...(a.lastError ? { lastError: a.lastError } : {}),
    ...(lastRun?.logExcerpt ? { logExcerpt: lastRun.logExcerpt } : {}),
    ...(lastRun?.logUrl && /^https?:\/\/[^\s<>"']+$/.test(lastRun.logUrl) ? { logUrl: lastRun.logUrl } : {}),
  };
}

type Data = Record<string, unknown>;
const str = (d: Data, k: string): string | undefined => (typeof d[k] === 'string' && d[k] !== '' ? (d[k] as string) : undefined);
const num = (d: Data, k: string): number | undefined => (typeof d[k] === 'number' ? (d[k] as number) : undefined);
const who = (v: string | null | undefined) => v ?? 'someone';

/** The event in words, read defensively from its data (old rows may lack fields). */
function eventSentence({ event, alert: a, workflow }: FactsInput): { line: string; detail?: string } {
  const d = (event.data ?? {}) as Data;
  switch (event.kind) {
    case 'opened':
      return { line: `Alert opened: ${a.consecutiveFailures} consecutive failure${a.consecutiveFailures === 1 ? '' : 's'} of ${workflow.name}.` };
    case 'escalated':
      return { line: `Escalated to critical${event.actor ? ` by ${event.actor}` : ''}: ${a.consecutiveFailures} consecutive failures${str(d, 'reason') ? ` (${str(d, 'reason')})` : ''}.` };
    case 'error_group_changed':
      return { line: `A different error appeared: group ${str(d, 'errorGroup') ?? str(d, 'to') ?? a.errorGroup ?? '?'}.`, detail: str(d, 'error') ?? a.lastError ?? undefined };
    case 'owner_changed': {
      const toUser = str(d, 'toUser');
      const note = str(d, 'note');
      const line =
        d.acknowledged === true && toUser
          ? `${toUser} took ownership. Escalation stopped.`
          : `Owner changed by ${who(event.actor)}: ${str(d, 'fromTeam') ?? a.ownerTeam}${str(d, 'fromUser') ? ` (${str(d, 'fromUser')})` : ''} → ${str(d, 'toTeam') ?? a.ownerTeam}${toUser ? ` (${toUser})` : ''}.`;
      return { line: note ? `${line} Note: ${note}` : line };
    }
    case 'silenced':
      return { line: `Silenced by ${who(event.actor ?? a.silencedBy)} ${str(d, 'until') ? `until ${utcText(new Date(str(d, 'until')!))}` : 'until resolved'}.${str(d, 'reason') ? ` Reason: ${str(d, 'reason')}` : ''}` };
    case 'unsilenced':
      return { line: `${str(d, 'why') === 'expired' ? 'Silence ended' : `Unsilenced by ${who(event.actor)}`}. Now ${a.severity}, ${a.consecutiveFailures} consecutive failures.` };
    case 'run_requested':
      return { line: `Run #${num(d, 'runId') ?? '?'} started by ${who(event.actor)}.` };
    case 'run_finished': {
      const ok = str(d, 'status') === 'succeeded';
      return { line: `Run #${num(d, 'runId') ?? '?'} ${ok ? 'succeeded' : 'failed'}.`, detail: ok ? undefined : str(d, 'error') };
    }
    case 'resolved': {
      const after = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : '?';
      const by = num(d, 'runId') ?? num(d, 'resolvedByRunId');
      return { line: `Recovered${by ? ` (run #${by} succeeded)` : ''}. Resolved after ${after}.` };
    }
    default:
      return { line: `${event.kind} at ${utcText(event.at)}.` };
  }
}
