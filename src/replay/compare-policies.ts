import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { ReplayServer } from './replay-database.js';
import { replayScenario, type ReplayResult } from './replay-scenario.js';
import { checkScenario, type ScenarioInput } from './scenario.js';
import type { Transcript } from './transcript.js';

/**
 * One scenario replayed twice through the real engine, each on a scratch
 * database of its own: under the policies that were in force and under a
 * candidate. What differs is what an operator weighs before changing a rule.
 */

export interface Incident {
  workflow: string;
  severity: 'warning' | 'critical';
  openedAt: string;
  /** Null while still open at the end of the replay. */
  resolvedAt: string | null;
  escalated: boolean;
}

export interface PolicyOutcome {
  alertsOpened: number;
  /** From the first failed tick of the period to the first alert; null without either. */
  timeToFirstAlertSeconds: number | null;
  escalations: number;
  /** Messages posted (roots and replies) per channel. */
  notificationsPerChannel: Record<string, number>;
  incidents: Incident[];
  transcript: Transcript;
}

export interface PolicyComparison {
  baseline: PolicyOutcome;
  candidate: PolicyOutcome;
  /** Incidents the candidate opens that the baseline did not (no alert of the same workflow overlapping in time). */
  appeared: Incident[];
  /** Incidents of the baseline the candidate does not open. */
  disappeared: Incident[];
}

export async function comparePolicies(server: ReplayServer, baseline: ScenarioInput, candidate: ScenarioInput, logger?: Logger): Promise<PolicyComparison> {
  const before = await replayOn(server, baseline, logger);
  const after = await replayOn(server, candidate, logger);
  return {
    baseline: before,
    candidate: after,
    appeared: after.incidents.filter((i) => !before.incidents.some((j) => overlaps(i, j))),
    disappeared: before.incidents.filter((i) => !after.incidents.some((j) => overlaps(i, j))),
  };
}

async function replayOn(server: ReplayServer, input: ScenarioInput, logger?: Logger): Promise<PolicyOutcome> {
  const scenario = checkScenario(input, 'ledger scenario');
  const database = await server.createDatabase();
  try {
    const result = await replayScenario(scenario, { db: database.db, ...(logger ? { logger } : {}) });
    return await outcomeOf(database.db, result);
  } finally {
    await database.drop();
  }
}

/** What a finished replay comes to, read from its database and its transcript. */
export async function outcomeOf(db: Db, result: ReplayResult): Promise<PolicyOutcome> {
  const alerts = await db
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .select(['workflows.name', 'alerts.severity', 'alerts.openedAt', 'alerts.resolvedAt', 'alerts.escalatedAt'])
    .orderBy('alerts.openedAt')
    .orderBy('alerts.id')
    .execute();
  const escalations = await db
    .selectFrom('alertEvents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('kind', '=', 'escalated')
    .executeTakeFirstOrThrow();
  const firstFailure = await db
    .selectFrom('runs')
    .select((eb) => eb.fn.min('tick').as('at'))
    .where('originalRunId', 'is', null)
    .where('status', 'in', ['failed', 'missed'])
    .executeTakeFirstOrThrow();
  const notificationsPerChannel: Record<string, number> = {};
  for (const call of result.transcript.calls) {
    if (call.method === 'chat.postMessage') notificationsPerChannel[call.channel] = (notificationsPerChannel[call.channel] ?? 0) + 1;
  }
  const firstAlert = alerts[0]?.openedAt;
  const firstFailedAt = firstFailure.at ? new Date(firstFailure.at as unknown as string) : undefined;
  return {
    alertsOpened: alerts.length,
    timeToFirstAlertSeconds: firstAlert && firstFailedAt ? Math.round((firstAlert.getTime() - firstFailedAt.getTime()) / 1000) : null,
    escalations: Number(escalations.n),
    notificationsPerChannel,
    incidents: alerts.map((a) => ({
      workflow: a.name,
      severity: a.severity,
      openedAt: a.openedAt.toISOString(),
      resolvedAt: a.resolvedAt?.toISOString() ?? null,
      escalated: a.escalatedAt !== null,
    })),
    transcript: result.transcript,
  };
}

function overlaps(a: Incident, b: Incident): boolean {
  if (a.workflow !== b.workflow) return false;
  const end = (i: Incident) => (i.resolvedAt ? Date.parse(i.resolvedAt) : Number.POSITIVE_INFINITY);
  return Date.parse(a.openedAt) <= end(b) && Date.parse(b.openedAt) <= end(a);
}

/** The side-by-side table `replay --from-db` prints. */
export function renderComparison(comparison: PolicyComparison, title: string, notes: readonly string[]): string {
  const { baseline: b, candidate: c } = comparison;
  const channels = [...new Set([...Object.keys(b.notificationsPerChannel), ...Object.keys(c.notificationsPerChannel)])].sort();
  const rows: [string, string, string][] = [
    ['alerts opened', String(b.alertsOpened), String(c.alertsOpened)],
    ['time to first alert', duration(b.timeToFirstAlertSeconds), duration(c.timeToFirstAlertSeconds)],
    ['escalations', String(b.escalations), String(c.escalations)],
    ...channels.map((ch): [string, string, string] => [`messages in ${ch}`, String(b.notificationsPerChannel[ch] ?? 0), String(c.notificationsPerChannel[ch] ?? 0)]),
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  const out = [`Replay of ${title}: policies in force vs candidate`, ...notes.map((n) => `  note: ${n}`), ''];
  out.push(`  ${''.padEnd(w)}  ${'in force'.padStart(10)}  ${'candidate'.padStart(10)}`);
  for (const [label, x, y] of rows) out.push(`  ${label.padEnd(w)}  ${x.padStart(10)}  ${y.padStart(10)}${x === y ? '' : '   ←'}`);
  out.push('');
  const line = (i: Incident) => `    ${i.workflow}: ${i.severity} opened ${i.openedAt.slice(0, 16).replace('T', ' ')}${i.resolvedAt ? `, resolved ${i.resolvedAt.slice(0, 16).replace('T', ' ')}` : ', still open'}`;
  out.push(`  incidents only under the candidate: ${comparison.appeared.length}`, ...comparison.appeared.map(line));
  out.push(`  incidents only under the policies in force: ${comparison.disappeared.length}`, ...comparison.disappeared.map(line));
  return out.join('\n');
}

function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  const m = Math.round(seconds / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}
