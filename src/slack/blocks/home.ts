import { stormSummaryLine } from './storm-message.js';
import { compactDuration, plural } from '../../domain/durations.js';
import { slackDate, threadPermalink, userMention } from './format.js';
import { capBlocks, codeSpan, lineSections, LIMITS, mrkdwn, omittedNote, plain, safeText, withItems } from './limits.js';
import type { Block } from './types.js';

export interface HomeAlert {
  id: number;
  workflowName: string;
  severity: string;
  openedAt: Date;
  consecutiveFailures: number;
  ownerTeam: string;
  ownerUser: string | null;
  silenced: { until: Date | 'resolved' } | null;
  /** What opened it when no failure did ('running_long', 'completion_missed'; issue 16). */
  cause?: string | null;
  /** Its thread (or storm message) to link the workflow's name to; none when nothing was posted yet. */
  thread?: { channel: string; ts: string } | null;
}

export interface HomeDeadNotification {
  id: number;
  destination: string;
  tenantId: string;
  workflowName: string;
  lastError: string | null;
  createdAt: Date;
}

/** A workflow held back by an open upstream incident (no alert of its own). */
export interface HomeBlocked {
  workflowName: string;
  upstream: string;
  alertId: number;
}

export interface HomeModel {
  tenants: { id: string; name: string; alerts: HomeAlert[]; blocked?: HomeBlocked[] }[];
  /** The newest dead notifications, a bounded list. */
  dead: HomeDeadNotification[];
  /** How many there are in all (when more than `dead` lists); absent: `dead` is all of them. */
  deadCount?: number;
  /** Storms under way in these tenants' channels (issue 16). */
  storms?: Parameters<typeof stormSummaryLine>[0][];
}

export const NO_TENANT_TEXT =
  "You aren't in any tenant's channel, so there are no alerts to show you here. This Home lists the open alerts of the tenants whose channel you are in (or that you administer): join your tenant's channel, or ask whoever runs the scheduler.";

/** The App Home tab: the cross-tenant dashboard. */
export function renderHome(model: HomeModel, now: Date): { type: 'home'; blocks: Block[] } {
  const open = model.tenants.reduce((n, t) => n + t.alerts.length, 0);
  const blocks: Block[] = [
    { type: 'header', text: plain('Scheduled workflows: open alerts', LIMITS.headerText) },
    {
      type: 'context',
      elements: [mrkdwn(`${open} open alert${open === 1 ? '' : 's'} across ${model.tenants.filter((t) => t.alerts.length).length} tenant(s) · updated ${slackDate(now)}`)],
    },
  ];
  if (model.storms?.length) blocks.push({ type: 'context', elements: model.storms.slice(0, LIMITS.contextElements).map((s) => mrkdwn(stormSummaryLine(s), LIMITS.contextElementText)) });
  // Seeing no tenant is not the same as nothing broken: say which it is.
  if (model.tenants.length === 0) blocks.push({ type: 'section', text: mrkdwn(NO_TENANT_TEXT) });
  else if (open === 0) blocks.push({ type: 'section', text: mrkdwn(':white_check_mark: Nothing is broken right now.') });
  for (const tenant of model.tenants) {
    const held = tenant.blocked ?? [];
    if (tenant.alerts.length === 0 && held.length === 0) continue;
    blocks.push({ type: 'divider' });
    const heldNote = held.length ? ` · ${held.length} upstream-blocked` : '';
    blocks.push(withItems({ type: 'section', text: mrkdwn(`*${safeText(tenant.name, 150)}* (\`${safeText(tenant.id, 64)}\`): ${tenant.alerts.length} open${heldNote}`) }, 0));
    const lines = tenant.alerts.map((a) => {
      const icon = a.severity === 'critical' ? ':rotating_light:' : ':warning:';
      const owner = a.ownerUser ? userMention(a.ownerUser) : `unowned (${a.ownerTeam})`;
      const silence = a.silenced ? ` · :mute: ${a.silenced.until === 'resolved' ? 'until resolved' : `until ${slackDate(a.silenced.until)}`}` : '';
      const name = safeText(a.workflowName, 100);
      return `${icon} *${a.thread ? `<${threadPermalink(a.thread.channel, a.thread.ts)}|${name}>` : name}* · ${a.severity} · open ${compactDuration(now.getTime() - a.openedAt.getTime())} · ${a.cause && !a.consecutiveFailures ? a.cause.replace(/_/g, ' ') : plural(a.consecutiveFailures, 'failure')} · ${owner}${silence}`;
    });
    const heldLines = held.map((b) => `:link: *${safeText(b.workflowName, 100)}* · upstream-blocked by *${safeText(b.upstream, 100)}* (alert #${b.alertId}), told in its thread`);
    blocks.push(...lineSections([...lines, ...heldLines]));
  }
  // Undeliverable notifications come last but are never the part cut off: the alerts give way to them.
  const dead = deadBlocks(model);
  return { type: 'home', blocks: [...capBlocks(blocks, LIMITS.surfaceBlocks - dead.length, omittedNote), ...dead] };
}

/** What was never told (a revoked token, a channel gone): counted in full, the newest listed. */
function deadBlocks(model: HomeModel): Block[] {
  const count = Math.max(model.deadCount ?? 0, model.dead.length);
  if (count === 0) return [];
  const lines = model.dead.map(
    (d) => `• ${safeText(d.destination, 100)} · ${safeText(d.tenantId, 64)} / ${safeText(d.workflowName, 100)} · ${slackDate(d.createdAt)}: ${codeSpan(d.lastError ?? 'unknown error', 200)}`,
  );
  const older = count - model.dead.length;
  return [
    { type: 'divider' },
    withItems({ type: 'section', text: mrkdwn(`*:skull: Undeliverable notifications* (${count})`) }, 0),
    ...lineSections(lines),
    ...(older > 0 ? [{ type: 'context', elements: [mrkdwn(`… and ${older} older, not listed here (\`scheduler_outbox_dead\` counts them all)`)] }] : []),
  ];
}
