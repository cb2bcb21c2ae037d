import type { Alert, AlertEvent, Run, Tenant, Workflow } from '../../db/schema.js';
import { ACTION, SILENCE_CHOICES } from '../ids.js';
import { cadenceInWords, formatDuration, slackDate, userMention, utcText } from './format.js';
import { capBlocks, checkId, codeBlock, LIMITS, mrkdwn, plain, safeText, truncate } from './limits.js';
import type { Block, SlackMessage } from './types.js';

/** Everything a root message shows: the alert as it is now. */
export interface AlertCard {
  alert: Pick<
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
  >;
  workflow: Pick<Workflow, 'id' | 'name' | 'cron' | 'timezone'>;
  tenant: Pick<Tenant, 'id' | 'name'>;
  /** The alert's latest run, for the log excerpt or link. */
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
  hasLauncher: boolean;
}

const SEVERITY_ICON = { warning: ':warning:', critical: ':rotating_light:' } as const;

function silence(card: AlertCard, now: Date): { until: Date | 'resolved'; by: string } | undefined {
  const a = card.alert;
  if (a.status !== 'open' || !a.silencedBy) return undefined;
  if (a.silencedUntil && a.silencedUntil.getTime() <= now.getTime()) return undefined;
  return { until: a.silencedUntil ?? 'resolved', by: a.silencedBy };
}

function headline(card: AlertCard, now: Date): string {
  const a = card.alert;
  if (a.status === 'resolved') {
    const after = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : '?';
    return `Resolved: ${card.tenant.name} / ${card.workflow.name} (after ${after})`;
  }
  const state = silence(card, now) ? 'silenced' : a.ownerUser || a.acknowledgedBy ? 'owned' : 'open';
  return `${a.severity === 'critical' ? 'Critical' : 'Warning'} (${state}): ${card.tenant.name} / ${card.workflow.name}, ${a.consecutiveFailures} failure${a.consecutiveFailures === 1 ? '' : 's'}`;
}

/** The root message of an alert's thread, re-rendered whole from current state on every change. */
export function renderAlertRoot(card: AlertCard, now: Date): SlackMessage {
  const a = card.alert;
  const resolved = a.status === 'resolved';
  const icon = resolved ? ':white_check_mark:' : SEVERITY_ICON[a.severity];
  const blocks: Block[] = [{ type: 'header', text: plain(`${resolved ? '✅' : a.severity === 'critical' ? '🚨' : '⚠️'} ${headline(card, now)}`, LIMITS.headerText) }];

  const fields = [
    `*Tenant*\n${safeText(card.tenant.name, 200)} (\`${safeText(card.tenant.id, 80)}\`)`,
    `*Workflow*\n${safeText(card.workflow.name, 200)}`,
    `*Cadence*\n${cadenceInWords(a.cadenceSeconds)} (\`${safeText(card.workflow.cron, 100)}\`, ${safeText(card.workflow.timezone, 64)})`,
    `*Consecutive failures*\n${a.consecutiveFailures}`,
    `*Opened*\n${slackDate(a.openedAt)}`,
  ];
  if (resolved && a.resolvedAt) fields.push(`*Resolved*\n${slackDate(a.resolvedAt)}`);
  else if (a.escalatedAt) fields.push(`*Escalated*\n${slackDate(a.escalatedAt)}`);
  else if (a.escalateAt) fields.push(`*Escalates*\n${slackDate(a.escalateAt)}${a.acknowledgedBy ? ' (stopped: owned)' : ''}`);
  fields.push(`*Owner*\n${ownerText(a)}`);
  const s = silence(card, now);
  if (s) fields.push(`*Silenced*\n${s.until === 'resolved' ? 'until resolved' : `until ${slackDate(s.until)}`} by ${userMention(s.by)}`);
  if (a.errorGroup) fields.push(`*Error group*\n\`${safeText(a.errorGroup, 100)}\` (${a.errorGroupCount}×)`);
  const stage = a.stage ?? card.lastRun?.stage;
  if (stage) fields.push(`*Failing stage*\n${safeText(stage, 200)}`);
  // A section holds at most 10 fields.
  blocks.push({ type: 'section', fields: fields.slice(0, 10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });
  if (fields.length > 10) blocks.push({ type: 'section', fields: fields.slice(10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });

  if (a.lastError) blocks.push({ type: 'section', text: mrkdwn(`*Last error*\n${codeBlock(a.lastError)}`) });
  if (card.lastRun?.logExcerpt) blocks.push({ type: 'section', text: mrkdwn(`*Log (run #${card.lastRun.id})*\n${codeBlock(card.lastRun.logExcerpt, 2000)}`) });
  if (card.lastRun?.logUrl) blocks.push({ type: 'context', elements: [mrkdwn(`Full log: ${safeLink(card.lastRun.logUrl)}`, LIMITS.contextElementText)] });

  if (resolved) {
    const after = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : '?';
    blocks.push({ type: 'context', elements: [mrkdwn(`${icon} Resolved after ${after}`)] });
  }
  blocks.push(actionsFor(card, now));

  const text = resolved
    ? `${headline(card, now)}. Resolved after ${a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : '?'}`
    : `${headline(card, now)}${a.lastError ? `: ${truncate(a.lastError, 500)}` : ''}`;
  return { text: fallback(text), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}

function ownerText(a: AlertCard['alert']): string {
  const who = a.ownerUser ? userMention(a.ownerUser) : 'nobody yet';
  const note = a.ownerNote ? `\n_${safeText(a.ownerNote, 500)}_` : '';
  return `${a.ownerTeam} · ${who}${note}`;
}

/** Links from runs are shown as text unless they are plain http(s) URLs without mrkdwn in them. */
function safeLink(url: string): string {
  if (/^https?:\/\/[^\s<>|]+$/.test(url) && url.length <= 1000) return `<${url}|open>`;
  return safeText(url, 500);
}

function actionsFor(card: AlertCard, now: Date): Block {
  const id = String(card.alert.id);
  if (card.alert.status === 'resolved') {
    return { type: 'actions', block_id: checkId(`alert_actions:${id}`), elements: [button(ACTION.history, 'History', id)] };
  }
  const owned = !!card.alert.ownerUser;
  const elements: Record<string, unknown>[] = [
    owned ? button(ACTION.release, 'Release', id) : button(ACTION.takeOwnership, 'Take ownership', id, 'primary'),
    button(ACTION.reassign, 'Reassign…', id),
  ];
  if (silence(card, now)) elements.push(button(ACTION.unsilence, 'Unsilence', id));
  else
    elements.push({
      type: 'static_select',
      action_id: ACTION.silence,
      placeholder: plain('Silence…', LIMITS.buttonText),
      options: SILENCE_CHOICES.map((c) => ({ text: plain(c.label, LIMITS.optionText), value: `${id}:${c.choice}` })),
    });
  const run = button(ACTION.runNow, 'Run now', id);
  run.confirm = {
    title: plain('Run now?', LIMITS.modalTitle),
    text: mrkdwn(
      card.hasLauncher
        ? `Start a manual run of *${safeText(card.workflow.name, 200)}* now? Its outcome is posted in this thread.`
        : `*${safeText(card.workflow.name, 200)}* has no launcher, so the bot cannot start it; you will be told so.`,
      300,
    ),
    confirm: plain('Run it', 30),
    deny: plain('Cancel', 30),
  };
  elements.push(run, button(ACTION.history, 'History', id));
  return { type: 'actions', block_id: checkId(`alert_actions:${id}`), elements };
}

function button(actionId: string, label: string, value: string, style?: 'primary' | 'danger'): Record<string, unknown> {
  return {
    type: 'button',
    action_id: checkId(actionId),
    text: plain(label, LIMITS.buttonText),
    value: truncate(value, LIMITS.buttonValue),
    ...(style ? { style } : {}),
  };
}

function omittedNote(omitted: number): Block {
  return { type: 'context', elements: [mrkdwn(`… ${omitted} more not shown`)] };
}

function fallback(text: string): string {
  return safeText(text, LIMITS.fallbackText);
}

/** Event data written by the engine; read defensively, since old rows may lack fields. */
type Data = Record<string, unknown>;
const s = (d: Data, k: string): string | undefined => (typeof d[k] === 'string' && d[k] !== '' ? (d[k] as string) : undefined);
const n = (d: Data, k: string): number | undefined => (typeof d[k] === 'number' ? (d[k] as number) : undefined);
const who = (v: string | undefined | null): string => (v ? userMention(v) : 'someone');

function escalationReason(reason: string | undefined): string {
  if (reason === 'kept_failing') return 'it kept failing and nobody has taken ownership';
  if (reason === 'deadline' || !reason) return 'and nobody took ownership before the deadline';
  return safeText(reason, 300);
}

/** One reply in the thread for a notified event. */
export function renderAlertReply(event: Pick<AlertEvent, 'kind' | 'actor' | 'at' | 'data'>, card: AlertCard, _now: Date): SlackMessage {
  const d = (event.data ?? {}) as Data;
  const a = card.alert;
  let line: string;
  let detail: string | undefined;
  switch (event.kind) {
    case 'opened':
      line = `:warning: Alert opened: ${a.consecutiveFailures} consecutive failures of *${safeText(card.workflow.name, 200)}*.`;
      break;
    case 'escalated':
      line = `:rotating_light: Escalated to *critical*${event.actor ? ` by ${who(event.actor)}` : ''}: ${a.consecutiveFailures} consecutive failures, ${escalationReason(s(d, 'reason'))}.`;
      break;
    case 'error_group_changed':
      line = `:twisted_rightwards_arrows: A different error appeared: group \`${safeText(s(d, 'errorGroup') ?? s(d, 'to') ?? a.errorGroup ?? '?', 100)}\`${s(d, 'previous') ?? s(d, 'from') ? ` (was \`${safeText((s(d, 'previous') ?? s(d, 'from'))!, 100)}\`)` : ''}.`;
      detail = s(d, 'error') ?? a.lastError ?? undefined;
      break;
    case 'owner_changed': {
      const toUser = s(d, 'toUser') ?? s(d, 'user') ?? a.ownerUser ?? undefined;
      const toTeam = s(d, 'toTeam') ?? s(d, 'team') ?? a.ownerTeam;
      const fromUser = s(d, 'fromUser');
      const fromTeam = s(d, 'fromTeam');
      const sameTeam = !fromTeam || fromTeam === toTeam;
      if (s(d, 'action') === 'take' || (sameTeam && toUser && toUser === event.actor && fromUser !== toUser)) {
        line = `:raising_hand: ${who(toUser)} took ownership. Escalation stopped.`;
      } else if (s(d, 'action') === 'release' || (sameTeam && !toUser && fromUser)) {
        line = `:wave: ${who(event.actor)} released ownership; the alert is unowned again.`;
      } else {
        const from = `${fromTeam ?? 'engineering'}${fromUser ? ` (${who(fromUser)})` : ''}`;
        const to = `${toTeam}${toUser ? ` (${who(toUser)})` : ''}`;
        line = `:arrow_right: Reassigned by ${who(event.actor)}: ${from} → ${to}.`;
      }
      const note = s(d, 'note');
      if (note) line += `\n> ${safeText(note, 1000).replace(/\n/g, '\n> ')}`;
      break;
    }
    case 'silenced': {
      const until = s(d, 'until') ? new Date(s(d, 'until')!) : a.silencedUntil;
      line = `:mute: Silenced by ${who(event.actor ?? a.silencedBy)} ${until && !Number.isNaN(until.getTime()) ? `until ${slackDate(until)}` : 'until resolved'}.`;
      const reason = s(d, 'reason') ?? a.silenceReason ?? undefined;
      if (reason) line += ` Reason: ${safeText(reason, 500)}`;
      break;
    }
    case 'unsilenced': {
      const counts = (d.counts ?? (d.summary as Data | undefined)?.counts) as Record<string, number> | undefined;
      const held = counts ? Object.entries(counts).filter(([, c]) => c > 0) : [];
      line = `:loud_sound: ${event.actor && s(d, 'why') !== 'expired' ? `Unsilenced by ${who(event.actor)}` : 'Silence ended'}.${held.length ? ` While silenced: ${held.map(([k, c]) => `${c} ${k.replace(/_/g, ' ')}`).join(', ')}.` : ''} Now ${a.severity}, ${a.consecutiveFailures} consecutive failures.`;
      break;
    }
    case 'run_requested':
      line = `:arrow_forward: Run #${n(d, 'runId') ?? '?'} started by ${who(event.actor)}.`;
      break;
    case 'run_finished': {
      const ok = s(d, 'status') === 'succeeded';
      line = `${ok ? ':white_check_mark:' : ':x:'} Run #${n(d, 'runId') ?? '?'} ${ok ? 'succeeded' : 'failed'}.`;
      detail = ok ? undefined : s(d, 'error');
      break;
    }
    case 'resolved': {
      const after = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : undefined;
      const by = n(d, 'runId') ?? n(d, 'resolvedByRunId');
      line = `:white_check_mark: Recovered${by ? ` (run #${by} succeeded)` : ''}. Resolved after ${after ?? '?'}.`;
      break;
    }
    default:
      line = `${safeText(event.kind, 100)} at ${utcText(event.at)}`;
  }
  const blocks: Block[] = [{ type: 'section', text: mrkdwn(line) }];
  if (detail) blocks.push({ type: 'section', text: mrkdwn(codeBlock(detail)) });
  const text = line.replace(/:[a-z_]+: /g, '') + (detail ? `\n${safeText(detail, 1000)}` : '');
  return { text: truncate(text, LIMITS.fallbackText), blocks };
}
