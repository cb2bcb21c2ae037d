import type { AlertEvent, Run, Workflow } from '../../db/schema.js';
import { alertView, type AlertView, type AlertViewInput } from '../../notify/alert-view.js';
import { flappingSentence, successesInARow } from '../../notify/flapping-text.js';
import { ACTION, SILENCE_CHOICES } from '../ids.js';
import { formatDuration, groupMention, slackDate, userMention, utcText } from './format.js';
import { capBlocks, checkId, codeBlock, LIMITS, mrkdwn, plain, safeText, truncate } from './limits.js';
import type { Block, SlackMessage } from './types.js';

/** Everything a root message shows: the alert as it is now. The facts are decided in alertView; this file renders them. */
export interface AlertCard extends AlertViewInput {
  workflow: Pick<Workflow, 'id' | 'name' | 'cron' | 'timezone'>;
  /** The alert's latest run, for the log excerpt or link. */
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
  hasLauncher: boolean;
}

const SEVERITY_ICON = { warning: ':warning:', critical: ':rotating_light:' } as const;

/** The root message of an alert's thread, re-rendered whole from current state on every change. */
export function renderAlertRoot(card: AlertCard, now: Date): SlackMessage {
  const a = card.alert;
  const view = alertView(card, now);
  const { resolved } = view;
  const icon = resolved ? ':white_check_mark:' : SEVERITY_ICON[a.severity];
  const blocks: Block[] = [{ type: 'header', text: plain(`${resolved ? '✅' : a.severity === 'critical' ? '🚨' : '⚠️'} ${view.headline}`, LIMITS.headerText) }];

  const fields = [
    `*Tenant*\n${safeText(view.tenant.name, 200)} (\`${safeText(view.tenant.id, 80)}\`)`,
    `*Workflow*\n${safeText(view.workflow.name, 200)}`,
    `*Cadence*\n${view.cadence} (\`${safeText(view.workflow.cron, 100)}\`, ${safeText(view.workflow.timezone, 64)})`,
    `*Consecutive failures*\n${view.consecutiveFailures}`,
    `*Opened*\n${slackDate(view.openedAt)}`,
  ];
  const m = view.milestone;
  if (m?.kind === 'resolved') fields.push(`*Resolved*\n${slackDate(m.at)}`);
  else if (m?.kind === 'escalated') fields.push(`*Escalated*\n${slackDate(m.at)}`);
  else if (m?.kind === 'escalates') fields.push(`*Escalates*\n${slackDate(m.at)}${m.stoppedByOwner ? ' (stopped: owned)' : ''}`);
  fields.push(`*Owner*\n${ownerText(view.owner)}`);
  const s = view.silence;
  if (s) fields.push(`*Silenced*\n${s.until === 'resolved' ? 'until resolved' : `until ${slackDate(s.until)}`} by ${userMention(s.by)}`);
  if (view.errorGroup) fields.push(`*Error group*\n\`${safeText(view.errorGroup.id, 100)}\` (${view.errorGroup.count}×)`);
  if (view.stage) fields.push(`*Failing stage*\n${safeText(view.stage, 200)}`);
  // A section holds at most 10 fields.
  blocks.push({ type: 'section', fields: fields.slice(0, 10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });
  if (fields.length > 10) blocks.push({ type: 'section', fields: fields.slice(10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });

  if (view.lastError) blocks.push({ type: 'section', text: mrkdwn(`*Last error*\n${codeBlock(view.lastError)}`) });
  if (card.lastRun?.logExcerpt) blocks.push({ type: 'section', text: mrkdwn(`*Log (run #${card.lastRun.id})*\n${codeBlock(card.lastRun.logExcerpt, 2000)}`) });
  if (card.lastRun?.logUrl) blocks.push({ type: 'context', elements: [mrkdwn(`Full log: ${safeLink(card.lastRun.logUrl)}`, LIMITS.contextElementText)] });

  if (resolved) blocks.push({ type: 'context', elements: [mrkdwn(`${icon} Resolved after ${view.resolvedAfter}`)] });
  blocks.push(actionsFor(card, view));

  const text = resolved ? `${view.headline}. Resolved after ${view.resolvedAfter}` : `${view.headline}${view.lastError ? `: ${truncate(view.lastError, 500)}` : ''}`;
  return { text: fallback(text), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}

function ownerText(owner: AlertView['owner']): string {
  const who = owner.user ? userMention(owner.user) : 'nobody yet';
  const note = owner.note ? `\n_${safeText(owner.note, 500)}_` : '';
  return `${owner.team} · ${who}${note}`;
}

/** Links from runs are shown as text unless they are plain http(s) URLs without mrkdwn in them. */
function safeLink(url: string): string {
  if (/^https?:\/\/[^\s<>|]+$/.test(url) && url.length <= 1000) return `<${url}|open>`;
  return safeText(url, 500);
}

function actionsFor(card: AlertCard, view: AlertView): Block {
  const id = String(card.alert.id);
  if (view.resolved) {
    return { type: 'actions', block_id: checkId(`alert_actions:${id}`), elements: [button(ACTION.history, 'History', id)] };
  }
  const owned = !!view.owner.user;
  const elements: Record<string, unknown>[] = [
    owned ? button(ACTION.release, 'Release', id) : button(ACTION.takeOwnership, 'Take ownership', id, 'primary'),
    button(ACTION.reassign, 'Reassign…', id),
  ];
  if (view.silence) elements.push(button(ACTION.unsilence, 'Unsilence', id));
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

/** `<@U1> <!subteam^S1> ` for an escalation's `mention` data (empty when nobody is named). */
function mentionPrefix(mention: unknown): string {
  const m = (mention ?? {}) as { users?: unknown; groups?: unknown };
  const users = Array.isArray(m.users) ? m.users.filter((u): u is string => typeof u === 'string').map(userMention) : [];
  const groups = Array.isArray(m.groups) ? m.groups.filter((g): g is string => typeof g === 'string').map(groupMention) : [];
  const all = [...users, ...groups];
  return all.length ? `${all.join(' ')} ` : '';
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
      line = `:rotating_light: ${mentionPrefix(d.mention)}Escalated to *critical*${event.actor ? ` by ${who(event.actor)}` : ''}: ${a.consecutiveFailures} consecutive failures, ${escalationReason(s(d, 'reason'))}.`;
      break;
    case 'reminder':
      line =
        s(d, 'about') === 'silenced'
          ? `:mute: Reminder: this alert is silenced until it resolves, and is still ${a.severity} with ${a.consecutiveFailures} consecutive failures.`
          : `:alarm_clock: Reminder for ${who(s(d, 'ownerUser') ?? a.ownerUser)}: you own this alert${s(d, 'since') ? ` since ${slackDate(new Date(s(d, 'since')!))}` : ''} and it is still failing (${a.consecutiveFailures} consecutive failures).`;
      break;
    case 'ownership_expired':
      line = `:hourglass: ${who(s(d, 'previousUser'))}'s ownership expired; the alert is unowned again and escalates on its own.`;
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
    case 'flapping':
      line = `:arrows_counterclockwise: ${flappingSentence(d)}`;
      break;
    case 'resolved': {
      const after = a.resolvedAt ? formatDuration(a.resolvedAt.getTime() - a.openedAt.getTime()) : undefined;
      if (s(d, 'by') === 'hand') {
        line = `:white_check_mark: Resolved by hand by ${who(event.actor)} after ${after ?? '?'}.`;
        const note = s(d, 'note');
        if (note) line += `\n> ${safeText(note, 1000).replace(/\n/g, '\n> ')}`;
        break;
      }
      const by = n(d, 'runId') ?? n(d, 'resolvedByRunId');
      line = `:white_check_mark: Recovered${by ? ` (run #${by} succeeded)` : ''}. Resolved after ${after ?? '?'}${successesInARow(d.successes)}.`;
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
