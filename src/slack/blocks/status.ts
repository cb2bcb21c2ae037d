import type { AlertCard } from './alert-card.js';
import { cadenceInWords, compactDuration, plural } from '../../domain/durations.js';
import { intermittentRuleOf } from '../../domain/flapping.js';
import { zoneLabel } from '../../domain/time-zone.js';
import { slackDate, slackDateIn, userMention } from './format.js';
import { historyLine, type HistoryRow } from './history.js';
import { capBlocks, codeSpan, lineSections, LIMITS, mrkdwn, omittedNote, safeText } from './limits.js';
import { stormSummaryLine } from './storm-message.js';
import type { Block, SlackMessage } from './types.js';

export interface WorkflowStatusRow {
  tenantId: string;
  name: string;
  cron: string;
  timezone: string;
  paused: boolean;
  monitoring: boolean;
  mode: string;
  nextTickAt: Date | null;
  lastRun: { status: string; finishedAt: Date | null; startedAt?: Date | null; runningLong?: boolean } | null;
  openAlert: { id: number; severity: string; ownerUser: string | null; silenced: boolean; consecutiveFailures: number; cause?: string | null } | null;
  /** The learned normal duration (issue 16); null before enough history. */
  normalSeconds?: number | null;
  /** Held back by an open upstream incident (docs/alerts.md, dependencies): its failures are told in that alert's thread. */
  blockedBy?: { upstream: string; alertId: number; failures: number; missed: number; since: Date } | null;
}

/** " · running since 02:00 (usually 20 minutes), running long" for a run still going. */
function durationNote(row: WorkflowStatusRow): string {
  const usually = row.normalSeconds != null ? `usually ${compactDuration(row.normalSeconds * 1000)}` : '';
  if (row.lastRun?.status !== 'running' || !row.lastRun.startedAt) return usually ? ` · ${usually}` : '';
  return ` · running since ${slackDate(row.lastRun.startedAt)}${usually ? ` (${usually})` : ''}${row.lastRun.runningLong ? ', *running long*' : ''}`;
}

/** " · upstream-blocked by *warehouse-load* (alert #12): 2 failures since …" */
function blockedText(row: WorkflowStatusRow): string {
  const b = row.blockedBy;
  if (!b) return '';
  const counts = [b.failures ? plural(b.failures, 'failure') : '', b.missed ? plural(b.missed, 'missed tick') : ''].filter(Boolean).join(', ');
  return ` · upstream-blocked by *${safeText(b.upstream, 100)}* (alert #${b.alertId})${counts ? `: ${counts} since ${slackDate(b.since)}` : ''}, told in its thread`;
}

function health(row: WorkflowStatusRow): string {
  if (row.paused) return ':double_vertical_bar: paused';
  if (row.openAlert) return `${row.openAlert.severity === 'critical' ? ':rotating_light:' : ':warning:'} ${row.openAlert.severity}`;
  if (row.blockedBy) return ':link: upstream-blocked';
  if (!row.lastRun) return ':grey_question: no runs yet';
  if (row.lastRun.status === 'succeeded') return ':large_green_circle: healthy';
  if (row.lastRun.status === 'running') return ':hourglass_flowing_sand: running';
  return `:large_orange_circle: last run ${safeText(row.lastRun.status, 20)}`;
}

/** `/scheduler status` without a name: every workflow in scope, grouped by tenant when there are several. */
export function renderStatusList(rows: WorkflowStatusRow[], scopeLabel: string, storms: Parameters<typeof stormSummaryLine>[0][] = []): SlackMessage {
  const blocks: Block[] = [{ type: 'section', text: mrkdwn(`*Workflows of ${safeText(scopeLabel, 200)}* (${rows.length})`) }];
  if (storms.length > 0) blocks.push({ type: 'context', elements: storms.slice(0, LIMITS.contextElements).map((s) => mrkdwn(stormSummaryLine(s), LIMITS.contextElementText)) });
  if (rows.length === 0) blocks.push({ type: 'section', text: mrkdwn('No workflows configured.') });
  const lines = rows.map((r) => {
    const alert = r.openAlert
      ? ` · alert #${r.openAlert.id}, ${r.openAlert.cause && !r.openAlert.consecutiveFailures ? r.openAlert.cause.replace(/_/g, ' ') : plural(r.openAlert.consecutiveFailures, 'failure')}${r.openAlert.ownerUser ? `, owner ${userMention(r.openAlert.ownerUser)}` : ', unowned'}${r.openAlert.silenced ? ', silenced' : ''}`
      : '';
    const next = r.nextTickAt ? ` · next ${slackDate(r.nextTickAt)}` : r.mode === 'observed' ? ' · observed' : '';
    return `${health(r)} *${safeText(r.name, 100)}*${rows.some((o) => o.tenantId !== r.tenantId) ? ` (${safeText(r.tenantId, 64)})` : ''} \`${safeText(r.cron, 60)}\`${next}${durationNote(r)}${alert}${blockedText(r)}`;
  });
  blocks.push(...lineSections(lines));
  const text = `Workflows of ${scopeLabel}: ${rows.map((r) => `${r.name}${r.openAlert ? ` (${r.openAlert.severity})` : r.blockedBy ? ' (upstream-blocked)' : ''}`).join(', ') || 'none'}`;
  return { text: safeText(text, LIMITS.fallbackText), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}

export interface WorkflowDetail {
  row: WorkflowStatusRow;
  tenantName: string;
  cadenceSeconds: number;
  /** hasLauncher false: nothing to start a retry with (an observed workflow), said so rather than "0 retries". */
  policy: { retries: number; alertAfter: number; firstSeverity: string; hasLauncher?: boolean } | null;
  /** "06:00 Europe/Berlin" when the workflow has a completion deadline. */
  completeBy?: string | null;
  runs: HistoryRow[];
  alert: AlertCard | null;
}

function policyLine(p: NonNullable<WorkflowDetail['policy']>): string {
  const intermittent = intermittentRuleOf(p.alertAfter);
  const also = intermittent ? ` (or ${intermittent.failures} of the last ${intermittent.window} while it flaps)` : '';
  const retries = p.hasLauncher === false ? 'no retries (it has no launcher: the outside scheduler that runs it retries it, or not)' : `${p.retries} retries per tick`;
  return `Policy: ${retries}, alert after ${plural(p.alertAfter, 'confirmed failure')}${p.alertAfter > 1 ? ' in a row' : ''}${also}, opens as ${p.firstSeverity}`;
}

/** `/scheduler status <workflow>`: its profile, last runs and alert. */
export function renderWorkflowStatus(d: WorkflowDetail): SlackMessage {
  const r = d.row;
  const profile = [
    `*${safeText(r.name, 100)}* of ${safeText(d.tenantName, 100)}: ${health(r)}`,
    `Runs ${cadenceInWords(d.cadenceSeconds)} (\`${safeText(r.cron, 60)}\`, ${safeText(zoneLabel(r.timezone), 80)}), ${r.mode}${r.nextTickAt ? `, next tick ${slackDateIn(r.nextTickAt, r.timezone)}` : ''}`,
    d.policy ? policyLine(d.policy) : '',
    durationNote(r) ? `Duration:${durationNote(r).slice(2)}` : '',
    d.completeBy ? `Must complete by ${safeText(d.completeBy, 80)} each tick` : '',
  ].filter(Boolean);
  const blocks: Block[] = [{ type: 'section', text: mrkdwn(profile.join('\n')) }];
  if (d.alert) {
    const a = d.alert.alert;
    blocks.push({
      type: 'section',
      text: mrkdwn(
        `*Open alert #${a.id}*: ${a.severity}, ${a.consecutiveFailures > 0 ? `${plural(a.consecutiveFailures, 'consecutive failure')} since` : 'open since'} ${slackDate(a.openedAt)}; owner ${a.ownerTeam}${a.ownerUser ? ` (${userMention(a.ownerUser)})` : ''}${a.lastError ? `\nLast error: ${codeSpan(a.lastError, 500)}` : ''}`,
      ),
    });
  } else if (r.blockedBy) {
    blocks.push({ type: 'section', text: mrkdwn(`*Upstream-blocked*: no alert of its own while its upstream is down${blockedText(r)}.`) });
  } else {
    blocks.push({ type: 'section', text: mrkdwn('No open alert.') });
  }
  blocks.push({ type: 'section', text: mrkdwn(`*Last runs*\n${d.runs.length ? d.runs.slice(0, 10).map(historyLine).join('\n') : 'none yet'}`) });
  const text = `${r.name}: ${d.alert ? `open ${d.alert.alert.severity} alert` : 'no open alert'}; last runs ${d.runs.map((x) => x.status).join(', ') || 'none'}`;
  return { text: safeText(text, LIMITS.fallbackText), blocks };
}
