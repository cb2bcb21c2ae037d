import type { Run, Workflow } from '../../db/schema.js';
import { alertView, type AlertView, type AlertViewInput } from '../../notify/alert-view.js';
import { plural } from '../../domain/durations.js';
import { zoneLabel } from '../../domain/time-zone.js';
import { cutText, isWebLink } from '../../domain/text.js';
import { eventText, plainEventText, type EventInput } from '../../notify/event-text.js';
import type { EventText, TextPart } from '../../notify/event-text/parts.js';
import { openingCauseParts } from '../../notify/event-text/duration.js';
import { ACTION, SILENCE_CHOICES } from './ids.js';
import { eventFallback, eventMrkdwn } from './event-text.js';
import { slackDate, userMention } from './format.js';
import { capBlocks, checkId, codeBlock, cutMrkdwn, LIMITS, mrkdwn, omittedNote, plain, safeText, truncate } from './limits.js';
import type { Block, SlackMessage } from './types.js';
import type { IncidentAudience } from '../../domain/pagerduty-incident.js';

/** Everything a root message shows: the alert as it is now. The facts are decided in alertView; this file renders them. */
export interface AlertCard extends AlertViewInput {
  workflow: Pick<Workflow, 'id' | 'name' | 'cron' | 'timezone'>;
  /** The alert's latest run, for the log excerpt or link. */
  lastRun?: Pick<Run, 'id' | 'logExcerpt' | 'logUrl' | 'stage'> | null;
  hasLauncher: boolean;
  /** For a resolved alert, the event that resolved it: the root shows its outcome. */
  resolution?: EventInput | null;
  /** A manual run (Run now) still going, asked for while the alert is open: the root shows it until it ends. */
  manualRun?: Pick<Run, 'id' | 'requestedBy' | 'startedAt'> | null;
  /** For an open alert a cause opened (no failure), its opening: the root says which deadline, which run. */
  opening?: EventInput | null;
  /** The channel it is shown in: the platform's, or a tenant's (the default: tenants never hear the platform's PagerDuty keys named). */
  audience?: IncidentAudience;
}

/** The root message of an alert's thread, re-rendered whole from current state on every change. */
export function renderAlertRoot(card: AlertCard, now: Date): SlackMessage {
  const a = card.alert;
  const view = alertView(card, now);
  if (view.resolved) return resolvedRoot(card, view);
  const blocks: Block[] = [{ type: 'header', text: plain(`${SEVERITY_HEADER_ICON[a.severity]} ${view.headline}`, LIMITS.headerText) }];

  const fields = [
    `*Tenant*\n${safeText(view.tenant.name, 200)} (\`${safeText(view.tenant.id, 80)}\`)`,
    `*Workflow*\n${safeText(view.workflow.name, 200)}`,
    `*Cadence*\n${view.cadence} (\`${safeText(view.workflow.cron, 100)}\`, ${safeText(zoneLabel(view.workflow.timezone), 80)})`,
    view.cause && view.consecutiveFailures === 0 ? `*Opened for*\n${view.cause}` : `*Consecutive failures*\n${view.consecutiveFailures}`,
    `*Opened*\n${slackDate(view.openedAt)}`,
  ];
  const m = view.milestone;
  if (m?.kind === 'escalated') fields.push(`*Escalated*\n${slackDate(m.at)}`);
  else if (m?.kind === 'escalates') fields.push(`*Escalates*\n${slackDate(m.at)}${m.stoppedByOwner ? ' (stopped: owned)' : ''}`);
  fields.push(`*Owner*\n${ownerText(view.owner)}`);
  const manual = card.manualRun;
  if (manual) fields.push(`*Run now*\nRun #${manual.id} running, started by ${manual.requestedBy ? userMention(manual.requestedBy) : 'the API'}${manual.startedAt ? ` ${slackDate(manual.startedAt)}` : ''}`);
  const s = view.silence;
  if (s) fields.push(`*Silenced*\n${s.until === 'resolved' ? 'until resolved' : `until ${slackDate(s.until)}`} by ${userMention(s.by)}`);
  if (view.errorGroup) fields.push(`*Error group*\n${errorGroupText(view.errorGroup)}`);
  if (view.stage) fields.push(`*Failing stage*\n${safeText(view.stage, 200)}`);
  if (view.policyVersion) fields.push(`*Policy*\nv${view.policyVersion}`);
  fields.push(...dependencyFields(view));
  // A section holds at most 10 fields.
  blocks.push({ type: 'section', fields: fields.slice(0, 10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });
  if (fields.length > 10) blocks.push({ type: 'section', fields: fields.slice(10).map((f) => mrkdwn(f, LIMITS.contextElementText)) });

  const cause = causeText(card, view);
  if (cause) blocks.push({ type: 'section', text: mrkdwn(eventMrkdwn(cause)) });
  if (view.lastError) blocks.push({ type: 'section', text: mrkdwn(`*Last error*\n${codeBlock(view.lastError)}`) });
  if (card.lastRun?.logExcerpt) blocks.push({ type: 'section', text: mrkdwn(`*Log (run #${card.lastRun.id})*\n${codeBlock(card.lastRun.logExcerpt, 2000)}`) });
  if (card.lastRun?.logUrl) blocks.push({ type: 'context', elements: [mrkdwn(`Full log: ${safeLink(card.lastRun.logUrl)}`, LIMITS.contextElementText)] });
  blocks.push(actionsFor(card, view));

  // The headline names the cause already: the notification's text goes on with what it found ("…, completion deadline missed: no success for …").
  const why = cause ? `: ${plainEventText({ ...cause, parts: cause.parts.slice(2) })}` : '';
  const text = `${view.headline}${why}${view.lastError ? `. Last error: ${cutText(view.lastError.replace(/\s+/g, ' '), 500)}` : ''}`;
  return { text: safeText(text, LIMITS.fallbackText), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}

/**
 * What an alert opened by a cause, not a failure, is about, as its opening
 * said it: "*settlement* missed its completion deadline: no success for the
 * tick of 01:30 by its deadline, 03:00 (America/Santiago); run #3 is still
 * running." Without it the root said only "completion deadline missed".
 */
function causeText(card: AlertCard, view: AlertView): EventText | undefined {
  if (!view.cause || view.consecutiveFailures !== 0 || !card.opening) return undefined;
  const data = (card.opening.data ?? {}) as Record<string, unknown>;
  const parts = openingCauseParts(data, card.opening.at);
  if (!parts) return undefined;
  // The root is re-rendered for hours: a time is shown as a time ("times out at …"), not as words of the opening's moment ("in 5 hours").
  const fixed = parts.map((p): TextPart => (p.type === 'time' ? { type: 'time', at: p.at, ...(p.zone ? { zone: p.zone } : {}) } : p));
  return { what: 'opened', icon: card.alert.severity, parts: [{ type: 'strong', text: card.workflow.name }, ...fixed] };
}

/** Dependencies on the root: what this incident holds back, and the upstream incident this alert is linked to. */
function dependencyFields(view: AlertView): string[] {
  const d = view.dependency;
  const out: string[] = [];
  if (d?.affected) out.push(`*Also affected*\n${plural(d.affected, 'downstream workflow')} (listed in the thread)`);
  if (d?.upstream) {
    const name = d.upstream.workflow ? safeText(d.upstream.workflow, 200) : "another tenant's workflow";
    out.push(`*Upstream*\n${name} (alert #${d.upstream.alertId}, ${d.upstream.open ? 'open' : 'resolved'})`);
  }
  return out;
}

const SEVERITY_HEADER_ICON = { warning: '⚠️', critical: '🚨' } as const;

/**
 * A resolved root shrinks to its outcome and a History button: the failure
 * card was for acting on, and the thread keeps the story. The outcome is the
 * resolving event's own text, the same sentence the thread reply carries.
 */
function resolvedRoot(card: AlertCard, view: AlertView): SlackMessage {
  const a = card.alert;
  const outcome = card.resolution
    ? eventText({ event: card.resolution, alert: a, workflow: card.workflow, ...(card.audience ? { audience: card.audience } : {}) })
    : eventText({ event: { kind: 'resolved', actor: null, at: a.resolvedAt ?? a.openedAt, data: {} }, alert: a, workflow: card.workflow });
  const where = { tenant: view.tenant.name, workflow: view.workflow.name };
  const blocks: Block[] = [
    { type: 'header', text: plain(`✅ ${view.headline}`, LIMITS.headerText) },
    { type: 'section', text: mrkdwn(eventMrkdwn(outcome)) },
    { type: 'context', elements: [mrkdwn(`Opened ${slackDate(view.openedAt)} · ${plural(view.consecutiveFailures, 'failure')} · ${ownerText(view.owner).split('\n')[0]}${view.policyVersion ? ` · policy v${view.policyVersion}` : ''}`, LIMITS.contextElementText)] },
    actionsFor(card, view),
  ];
  return { text: cutMrkdwn(eventFallback(outcome, where), LIMITS.fallbackText), blocks };
}

/** `abc123` (5×, first …, latest …): how long this error has been the one failing it. */
function errorGroupText(g: NonNullable<AlertView['errorGroup']>): string {
  const seen = [g.firstAt ? `first ${slackDate(g.firstAt)}` : '', g.lastAt ? `latest ${slackDate(g.lastAt)}` : ''].filter(Boolean);
  return `\`${safeText(g.id, 100)}\` (${[`${g.count}×`, ...seen].join(', ')})`;
}

function ownerText(owner: AlertView['owner']): string {
  const who = owner.user ? userMention(owner.user) : 'nobody yet';
  const note = owner.note ? `\n_${safeText(owner.note, 500)}_` : '';
  return `${owner.team} · ${who}${note}`;
}

/** Links from runs are shown as text unless they are plain http(s) URLs (isWebLink) without mrkdwn's `|` in them. */
function safeLink(url: string): string {
  if (isWebLink(url) && !url.includes('|') && url.length <= 1000) return `<${url}|open>`;
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
    button(ACTION.resolve, 'Resolve…', id),
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


/**
 * One reply in the thread for a notified event: the event's one text (src/notify/event-text.ts), in mrkdwn.
 * A reminder to an owner (with its event id) carries the Take ownership button that answers it; once
 * answered (`answered`, the click's own in-place answer) it says who answered and when instead.
 */
export function renderAlertReply(event: EventInput & { id?: number }, card: AlertCard, _now: Date, answered?: { by: string; at: Date }): SlackMessage {
  const text = eventText({ event, alert: card.alert, workflow: card.workflow, ...(card.audience ? { audience: card.audience } : {}) });
  const blocks: Block[] = [{ type: 'section', text: mrkdwn(eventMrkdwn(text)) }];
  if (text.detail) blocks.push({ type: 'section', text: mrkdwn(codeBlock(text.detail)) });
  if (text.what === 'reminder:owned' && answered) {
    blocks.push({ type: 'context', elements: [mrkdwn(`:white_check_mark: ${userMention(answered.by)} answered ${slackDate(answered.at)}: still on it.`, LIMITS.contextElementText)] });
  } else if (text.what === 'reminder:owned' && event.id !== undefined && card.alert.status !== 'resolved') {
    const value = `${card.alert.id}:${event.id}`;
    blocks.push({ type: 'actions', block_id: checkId(`reminder_actions:${value}`), elements: [button(ACTION.keepOwnership, 'Take ownership', value, 'primary')] });
  }
  const detail = text.detail ? `\n${safeText(text.detail.replace(/\s+/g, ' '), 500)}` : '';
  return { text: cutMrkdwn(eventFallback(text, { tenant: card.tenant.name, workflow: card.workflow.name }) + detail, LIMITS.fallbackText), blocks };
}
