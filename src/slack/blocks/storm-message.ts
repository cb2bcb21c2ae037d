import type { Severity } from '../../db/schema.js';
import { plural } from '../../domain/durations.js';
import { ACTION, stormBlockId } from './ids.js';
import { slackDate, userMention } from './format.js';
import { capBlocks, checkId, codeSpan, LIMITS, mrkdwn, omittedNote, plain, safeText } from './limits.js';
import type { Block, SlackMessage } from './types.js';

/** One alert as a storm message lists it. */
export interface StormMember {
  alertId: number;
  tenant: { id: string; name: string };
  workflow: string;
  severity: Severity;
  status: 'open' | 'resolved';
  consecutiveFailures: number;
  ownerUser: string | null;
  silenced: boolean;
  lastError: string | null;
  /** It outlived the storm: its own thread carries it from then on. */
  ownThread: boolean;
  /**
   * Put in shadow since (src/domain/shadow.ts) and this is its tenant's channel: told only to the platform
   * channel now, so the message shows none of its state (docs/policies.md) until it resolves.
   */
  inShadow?: boolean;
}

export interface StormView {
  storm: { id: number; channel?: string; startedAt: Date; endedAt: Date | null };
  members: StormMember[];
}

/** Open alerts listed one section each; the rest are counted (the message holds 50 blocks). */
const LISTED_OPEN = 40;

/**
 * The one message a channel gets for a storm, re-rendered whole from current
 * state: every alert it took in with its state, owner and an overflow menu
 * (Take ownership / Release, Silence, Resolve…) that acts on that alert alone.
 */
export function renderStormMessage(view: StormView): SlackMessage {
  const { storm, members } = view;
  const all = members.filter((m) => m.status === 'open').sort(byUrgency);
  const open = all.filter((m) => !m.inShadow);
  const elsewhere = all.filter((m) => m.inShadow);
  const resolved = members.filter((m) => m.status === 'resolved');
  const critical = open.filter((m) => m.severity === 'critical').length;
  const owned = open.filter((m) => m.ownerUser).length;
  // The platform channel's storm may hold two tenants' alike-named workflows: each list names the tenant then.
  const manyTenants = new Set(members.map((m) => m.tenant.id)).size > 1;
  const nameOf = (m: StormMember) => (manyTenants ? `${m.tenant.name} / ${m.workflow}` : m.workflow);
  const headline = storm.endedAt ? `Storm over: ${plural(members.length, 'alert')}` : `Storm: ${plural(members.length, 'alert')} opened at once`;
  const blocks: Block[] = [{ type: 'header', text: plain(`⛈️ ${headline}`, LIMITS.headerText) }];
  const summary = [`Started ${slackDate(storm.startedAt)}`, `${open.length} open${critical ? ` (${critical} critical)` : ''}`, `${resolved.length} resolved`, `${owned} owned`];
  blocks.push({ type: 'context', elements: [mrkdwn(summary.join(' · '), LIMITS.contextElementText)] });
  if (storm.endedAt) {
    const outlived = open.filter((m) => m.ownThread).length;
    const end = `Ended ${slackDate(storm.endedAt)}${outlived ? `: ${plural(outlived, 'alert')} still open ${outlived === 1 ? 'has its own thread' : 'have their own threads'}` : ''}.`;
    blocks.push({ type: 'context', elements: [mrkdwn(end, LIMITS.contextElementText)] });
  } else {
    blocks.push({ type: 'context', elements: [mrkdwn('Each alert keeps its own state and owner: use the ⋯ menu beside it. New failures update this message; an alert still open when the storm ends gets its own thread.', LIMITS.contextElementText)] });
  }
  for (const m of open.slice(0, LISTED_OPEN)) blocks.push(memberSection(storm.id, m));
  if (open.length > LISTED_OPEN) blocks.push({ type: 'context', elements: [mrkdwn(`… ${open.length - LISTED_OPEN} more open: \`/scheduler status\` lists them all`)] });
  if (elsewhere.length > 0) {
    const names = elsewhere.map((m) => safeText(nameOf(m), 160)).join(', ');
    blocks.push({ type: 'context', elements: [mrkdwn(`Now in shadow mode, no longer told here: ${names}`, LIMITS.contextElementText)] });
  }
  if (resolved.length > 0) {
    const names = resolved.map((m) => safeText(nameOf(m), 160)).join(', ');
    blocks.push({ type: 'context', elements: [mrkdwn(`✅ Resolved: ${names}`, LIMITS.contextElementText)] });
  }
  const listed = open.length ? ` (${open.slice(0, 10).map(nameOf).join(', ')}${open.length > 10 ? ', …' : ''})` : '';
  const text = `${headline}: ${open.length} open, ${resolved.length} resolved${listed}`;
  return { text: safeText(text, LIMITS.fallbackText), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}

const ICON: Record<Severity, string> = { warning: '⚠️', critical: '🚨' };

function byUrgency(a: StormMember, b: StormMember): number {
  return (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1) || a.workflow.localeCompare(b.workflow) || a.tenant.name.localeCompare(b.tenant.name);
}

function memberSection(stormId: number, m: StormMember): Block {
  const parts = [`${ICON[m.severity]} *${safeText(m.workflow, 150)}*`, safeText(m.tenant.name, 80), plural(m.consecutiveFailures, 'failure')];
  parts.push(m.ownerUser ? `owner ${userMention(m.ownerUser)}` : 'unowned');
  if (m.silenced) parts.push('silenced');
  if (m.ownThread) parts.push('own thread');
  const error = m.lastError ? `\n${codeSpan(m.lastError, 200)}` : '';
  const options = [
    m.ownerUser ? option('Release ownership', `${m.alertId}:release`) : option('Take ownership', `${m.alertId}:take`),
    option('Silence 1 hour', `${m.alertId}:silence:1h`),
    option('Silence until resolved', `${m.alertId}:silence:resolved`),
    option('Resolve…', `${m.alertId}:resolve`),
  ];
  return {
    type: 'section',
    block_id: checkId(stormBlockId(stormId, m.alertId)),
    text: mrkdwn(`${parts.join(' · ')}${error}`),
    accessory: { type: 'overflow', action_id: ACTION.stormAlertMenu, options },
  };
}

function option(text: string, value: string) {
  return { text: plain(text, LIMITS.optionText), value };
}

/** One line naming a storm under way, for `/scheduler status`, the App Home and the digest. */
export function stormSummaryLine(s: { channel: string; startedAt: Date; alerts: number; open: number }): string {
  const channel = /^[CG][A-Z0-9]+$/.test(s.channel) ? `<#${s.channel}>` : safeText(s.channel, 80);
  return `⛈️ Storm since ${slackDate(s.startedAt)}: ${plural(s.alerts, 'alert')} (${s.open} open) are one message in ${channel}; its ⋯ menus act on each alert.`;
}
