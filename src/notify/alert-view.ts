import type { Alert, Run, Tenant, Workflow } from '../db/schema.js';
import type { AlertDependency } from '../domain/dependencies.js';
import { cadenceInWords } from '../domain/durations.js';
import { silenceState } from '../domain/silence.js';

/**
 * The facts of an alert as every destination shows them, decided once: the
 * Slack root (src/slack/blocks/alert-card.ts) and the email, webhook and
 * PagerDuty facts (src/notify/transports/alert-facts.ts) only render this.
 * Pure: the caller loads the rows and passes `now`. Strings are raw, possibly
 * hostile text from runs; each renderer escapes for its own medium.
 */
export interface AlertView {
  /**
   * "Critical (open): Acme / nightly-pipeline, 4 failures" or "Resolved: Acme / nightly-pipeline"; plain text.
   * A flapping alert says so ("…, 1 failure, flapping"): the count is of failures in a row, and one opened by
   * failing intermittently has one at most.
   */
  headline: string;
  resolved: boolean;
  tenant: { id: string; name: string };
  workflow: { name: string; cron: string; timezone: string };
  cadence: string;
  consecutiveFailures: number;
  openedAt: Date;
  /** The one time after opening worth showing: resolved, escalated, or when it will escalate. */
  milestone?: { kind: 'resolved' | 'escalated'; at: Date } | { kind: 'escalates'; at: Date; stoppedByOwner: boolean };
  owner: { team: string; user?: string; note?: string };
  /** Present only while the silence is in force at `now`. */
  silence?: { until: Date | 'resolved'; by: string };
  /** The group, how often it failed in this alert, and its first and latest occurrence (DESIGN.md, core idea 9). */
  errorGroup?: { id: string; count: number; firstAt?: Date; lastAt?: Date };
  stage?: string;
  lastError?: string;
  /** The policy version the alert runs under (docs/policies.md); absent for alerts older than versions. */
  policyVersion?: number;
  /** What opened it when no failure did ("running long", "completion deadline missed"); absent: failures. */
  cause?: string;
  /** Dependencies (docs/alerts.md): downstream workflows held back by this alert; the upstream incident this one is linked to. */
  dependency?: AlertDependency;
}

const CAUSE_WORDS: Record<string, string> = { running_long: 'running long', completion_missed: 'completion deadline missed' };

export type AlertViewAlert = Pick<
  Alert,
  | 'id'
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
> & {
  policyVersion?: number | null;
  cause?: string | null;
  flappingSince?: Date | null;
  errorGroupFirstAt?: Date | null;
  errorGroupLastAt?: Date | null;
};

export interface AlertViewInput {
  alert: AlertViewAlert;
  workflow: Pick<Workflow, 'name' | 'cron' | 'timezone'> & { shadow?: boolean };
  tenant: Pick<Tenant, 'id' | 'name'> & { shadow?: boolean };
  /** The alert's latest run, for its stage when the alert has none. */
  lastRun?: Pick<Run, 'stage'> | null;
  dependency?: AlertDependency;
}

export function severityWord(severity: AlertViewAlert['severity']): string {
  return severity === 'critical' ? 'Critical' : 'Warning';
}

/** The silence in force at `now` (src/domain/silence.ts decides), as the view shows it. */
function silenceAt(a: AlertViewAlert, now: Date): AlertView['silence'] {
  const state = silenceState(a, now);
  return state.silenced ? { until: state.until, by: state.by } : undefined;
}

function milestoneOf(a: AlertViewAlert): AlertView['milestone'] {
  if (a.status === 'resolved' && a.resolvedAt) return { kind: 'resolved', at: a.resolvedAt };
  if (a.escalatedAt) return { kind: 'escalated', at: a.escalatedAt };
  if (a.escalateAt) return { kind: 'escalates', at: a.escalateAt, stoppedByOwner: !!a.acknowledgedBy };
  return undefined;
}

export function alertView({ alert: a, workflow, tenant, lastRun, dependency }: AlertViewInput, now: Date): AlertView {
  const resolved = a.status === 'resolved';
  const cause = a.cause ? (CAUSE_WORDS[a.cause] ?? a.cause.replace(/_/g, ' ')) : undefined;
  const silence = silenceAt(a, now);
  const state = silence ? 'silenced' : a.ownerUser || a.acknowledgedBy ? 'owned' : 'open';
  const headline = resolved
    ? `Resolved: ${tenant.name} / ${workflow.name}`
    : `${severityWord(a.severity)} (${state}): ${tenant.name} / ${workflow.name}, ${cause && a.consecutiveFailures === 0 ? cause : `${a.consecutiveFailures} failure${a.consecutiveFailures === 1 ? '' : 's'}`}${a.flappingSince ? ', flapping' : ''}`;
  // Shadow: told only to the audit destination; the marker says no one else was.
  const shadowMark = workflow.shadow || tenant.shadow ? 'Shadow · ' : '';
  const milestone = milestoneOf(a);
  const stage = a.stage ?? lastRun?.stage;
  return {
    headline: `${shadowMark}${headline}`,
    resolved,
    tenant: { id: tenant.id, name: tenant.name },
    workflow: { name: workflow.name, cron: workflow.cron, timezone: workflow.timezone },
    cadence: cadenceInWords(a.cadenceSeconds),
    consecutiveFailures: a.consecutiveFailures,
    openedAt: a.openedAt,
    ...(milestone ? { milestone } : {}),
    owner: { team: a.ownerTeam, ...(a.ownerUser ? { user: a.ownerUser } : {}), ...(a.ownerNote ? { note: a.ownerNote } : {}) },
    ...(silence ? { silence } : {}),
    ...(a.errorGroup ? { errorGroup: errorGroupOf(a, a.errorGroup) } : {}),
    ...(stage ? { stage } : {}),
    ...(a.lastError ? { lastError: a.lastError } : {}),
    ...(a.policyVersion ? { policyVersion: a.policyVersion } : {}),
    ...(cause ? { cause } : {}),
    ...(dependency && (dependency.affected || dependency.upstream) ? { dependency } : {}),
  };
}

function errorGroupOf(a: AlertViewAlert, id: string): NonNullable<AlertView['errorGroup']> {
  return { id, count: a.errorGroupCount, ...(a.errorGroupFirstAt ? { firstAt: a.errorGroupFirstAt } : {}), ...(a.errorGroupLastAt ? { lastAt: a.errorGroupLastAt } : {}) };
}
