import type { AlertEvent, Run } from '../../db/schema.js';
import { utcText } from '../../domain/durations.js';
import { isWebLink } from '../../domain/text.js';
import { zoneLabel } from '../../domain/time-zone.js';
import type { IncidentAudience } from '../../domain/pagerduty-incident.js';
import type { Named } from '../../domain/page-fallback.js';
import { alertView, type AlertViewInput } from '../alert-view.js';
import { eventText, plainEventText, type EventText } from '../event-text.js';

/**
 * The alert's view (src/notify/alert-view.ts) rendered as plain labelled
 * values for destinations that are not Slack (email text and HTML, webhook
 * JSON, PagerDuty details), with the event's one text rendered plain. Pure. Strings
 * are raw, possibly hostile text from runs; each renderer escapes for its
 * own medium.
 */
export interface AlertFacts {
  /** "Critical (open): Acme / nightly-pipeline, 4 failures" */
  headline: string;
  /** What this event says, in one sentence (the plain rendering of `eventText`). */
  eventLine: string;
  /** The one event text every destination renders (src/notify/event-text.ts). */
  eventText: EventText;
  /** A longer text the event carries (a run's error). */
  eventDetail?: string;
  fields: { label: string; value: string }[];
  lastError?: string;
  logExcerpt?: string;
  /** Only plain http(s) URLs. */
  logUrl?: string;
}

export interface FactsInput extends AlertViewInput {
  /** The tenant's on-call (`tenants.oncall`): which rung a page starts at, named by role off Slack (src/domain/page-fallback.ts `offSlackPage`). */
  tenant: AlertViewInput['tenant'] & { oncall?: Named | null };
  event: Pick<AlertEvent, 'kind' | 'actor' | 'at' | 'data'>;
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
  /** Who reads it (src/notify/event-text/parts.ts): a tenant's destination unless said otherwise. */
  audience?: IncidentAudience;
}

export function alertFacts(input: FactsInput, now: Date): AlertFacts {
  const { lastRun } = input;
  const view = alertView(input, now);
  const fields: AlertFacts['fields'] = [
    { label: 'Tenant', value: `${view.tenant.name} (${view.tenant.id})` },
    { label: 'Workflow', value: view.workflow.name },
    { label: 'Cadence', value: `${view.cadence} (${view.workflow.cron}, ${zoneLabel(view.workflow.timezone)})` },
    { label: 'Consecutive failures', value: String(view.consecutiveFailures) },
    { label: 'Opened', value: utcText(view.openedAt) },
  ];
  const m = view.milestone;
  if (m?.kind === 'resolved') fields.push({ label: 'Resolved', value: utcText(m.at) });
  else if (m?.kind === 'escalated') fields.push({ label: 'Escalated', value: utcText(m.at) });
  else if (m?.kind === 'escalates') fields.push({ label: 'Escalates', value: `${utcText(m.at)}${m.stoppedByOwner ? ' (stopped: owned)' : ''}` });
  const { owner, silence } = view;
  fields.push({ label: 'Owner', value: `${owner.team} · ${owner.user ?? 'nobody yet'}${owner.note ? ` (${owner.note})` : ''}` });
  if (silence) fields.push({ label: 'Silenced', value: `${silence.until === 'resolved' ? 'until resolved' : `until ${utcText(silence.until)}`} by ${silence.by}` });
  if (view.errorGroup) fields.push({ label: 'Error group', value: errorGroupText(view.errorGroup) });
  if (view.stage) fields.push({ label: 'Failing stage', value: view.stage });

  // Off Slack, whatever the destination: a page names its rung by role, as only Slack can tell whom a name reaches.
  const text = eventText({ ...input, offSlack: { tenantOnCall: input.tenant.oncall ?? {} } });
  return {
    headline: view.headline,
    eventLine: plainEventText(text),
    eventText: text,
    ...(text.detail ? { eventDetail: text.detail } : {}),
    fields,
    ...(view.lastError ? { lastError: view.lastError } : {}),
    ...(lastRun?.logExcerpt ? { logExcerpt: lastRun.logExcerpt } : {}),
    ...(lastRun?.logUrl && isWebLink(lastRun.logUrl) ? { logUrl: lastRun.logUrl } : {}),
  };
}

/** `abc123 (5×, first …, latest …)`: how long this error has been the one failing it (core idea 9), as the Slack root says it. */
function errorGroupText(g: NonNullable<ReturnType<typeof alertView>['errorGroup']>): string {
  const seen = [g.firstAt ? `first ${utcText(g.firstAt)}` : '', g.lastAt ? `latest ${utcText(g.lastAt)}` : ''].filter(Boolean);
  return `${g.id} (${[`${g.count}×`, ...seen].join(', ')})`;
}
