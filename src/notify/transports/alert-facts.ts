import { policyChangedSentence, wentLiveSentence } from '../policy-text.js';
import type { AlertEvent, Run } from '../../db/schema.js';
import { formatDuration, utcText } from '../../slack/blocks/format.js';
import { alertView, type AlertViewInput } from '../alert-view.js';
import { flappingSentence, successesInARow } from '../flapping-text.js';

/**
 * The alert's view (src/notify/alert-view.ts) rendered as plain labelled
 * values for destinations that are not Slack (email text and HTML, webhook
 * JSON, PagerDuty details), with the event in one sentence. Pure. Strings
 * are raw, possibly hostile text from runs; each renderer escapes for its
 * own medium.
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

export interface FactsInput extends AlertViewInput {
  event: Pick<AlertEvent, 'kind' | 'actor' | 'at' | 'data'>;
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
}

export function alertFacts(input: FactsInput, now: Date): AlertFacts {
  const { lastRun } = input;
  const view = alertView(input, now);
  const fields: AlertFacts['fields'] = [
    { label: 'Tenant', value: `${view.tenant.name} (${view.tenant.id})` },
    { label: 'Workflow', value: view.workflow.name },
    { label: 'Cadence', value: `${view.cadence} (${view.workflow.cron}, ${view.workflow.timezone})` },
    { label: 'Consecutive failures', value: String(view.consecutiveFailures) },
    { label: 'Opened', value: utcText(view.openedAt) },
  ];
  const m = view.milestone;
  if (m?.kind === 'resolved') fields.push({ label: 'Resolved', value: `${utcText(m.at)} (after ${view.resolvedAfter})` });
  else if (m?.kind === 'escalated') fields.push({ label: 'Escalated', value: utcText(m.at) });
  else if (m?.kind === 'escalates') fields.push({ label: 'Escalates', value: `${utcText(m.at)}${m.stoppedByOwner ? ' (stopped: owned)' : ''}` });
  const { owner, silence } = view;
  fields.push({ label: 'Owner', value: `${owner.team} · ${owner.user ?? 'nobody yet'}${owner.note ? ` (${owner.note})` : ''}` });
  if (silence) fields.push({ label: 'Silenced', value: `${silence.until === 'resolved' ? 'until resolved' : `until ${utcText(silence.until)}`} by ${silence.by}` });
  if (view.errorGroup) fields.push({ label: 'Error group', value: `${view.errorGroup.id} (${view.errorGroup.count}×)` });
  if (view.stage) fields.push({ label: 'Failing stage', value: view.stage });

  const { line, detail } = eventSentence(input);
  return {
    headline: view.headline,
    eventLine: line,
    ...(detail ? { eventDetail: detail } : {}),
    fields,
    ...(view.lastError ? { lastError: view.lastError } : {}),
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
      return { line: `Recovered${by ? ` (run #${by} succeeded)` : ''}. Resolved after ${after}${successesInARow(d.successes)}.` };
    }
    case 'flapping':
      return { line: flappingSentence(d) };
    case 'policy_changed':
      return { line: policyChangedSentence(d) };
    case 'went_live':
      return { line: wentLiveSentence() };
    default:
      return { line: `${event.kind} at ${utcText(event.at)}.` };
  }
}
