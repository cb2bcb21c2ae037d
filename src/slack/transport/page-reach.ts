import type { Config } from '../../config/env.js';
import type { Tenant } from '../../db/schema.js';
import { isShadowEvent } from '../../domain/events.js';
import { onCallReach, pageTarget, type PageRung } from '../../domain/oncall-reach.js';
import { pageLadder, pagePlan, type Mention, type Named, type PageAudience, type PagePlan } from '../../domain/page-fallback.js';
import type { SlackAccount } from '../../domain/rights.js';
import { LIMITS, mrkdwn } from '../blocks/limits.js';
import { pagePlanLine } from '../blocks/page-notes.js';
import type { SlackMessage } from '../blocks/types.js';
import type { SlackDirectory } from './directory.js';

/** What the fallback needs of the configuration: where the platform's on-call is paged, and who they are. */
export type PagingConfig = Partial<Pick<Config, 'PLATFORM_CHANNEL' | 'PLATFORM_ONCALL'>>;

type PagedEvent = { kind: string; data: unknown };

/**
 * A page's message at send time (docs/alerts.md, "A page that reaches
 * nobody"): Slack is asked, rung by rung, whether the page's names reach
 * anyone (the owner, the tenant's on-call, the platform's on-call, through
 * the directory's cache), `pageTarget` and `pagePlan` decide, and the page is
 * rendered naming the rung paged, with a line saying why. The platform's
 * on-call is named only in the platform channel; the tenant's channel hears
 * that they were paged. Deterministic for one answer of Slack's, so a row
 * delivered again posts the same message under the same key.
 */
export async function pagedMessage(
  directory: SlackDirectory | undefined,
  config: PagingConfig | undefined,
  at: { event: PagedEvent; tenant: Pick<Tenant, 'oncall'>; channel: string; pages: boolean },
  render: (event: PagedEvent) => SlackMessage,
): Promise<{ message: SlackMessage; broadcast: boolean }> {
  const { event } = at;
  const asMade = () => ({ message: render(event), broadcast: at.pages });
  const named = mentionOf(notifiedBy(event, at.pages));
  if (!directory || !named || isShadowEvent(event.data) || named.groups.length > 1 || named.groups.length + named.users.length === 0) return asMade();
  const platformChannel = config?.PLATFORM_CHANNEL;
  const audience = channelAudience(config, at.channel);
  const ladder = pageLadder(named, at.tenant.oncall ?? {}, platformChannel ? config?.PLATFORM_ONCALL : undefined);
  const plan = pagePlan(pageTarget(await askRungs(directory, ladder)), ladder, audience);
  if (plan.kind === 'as_made') return asMade();
  const carries = hasMention(event.data);
  const mention = replacement(plan);
  const message = render(carries && mention ? { ...event, data: { ...(event.data as object), mention } } : event);
  const line = pagePlanLine(plan, !carries);
  // The platform channel is where the operator is paged for the tenant (a reminder too): broadcast.
  const operator = audience === 'platform' && (plan.kind === 'nobody' || (plan.kind === 'fell_back' && plan.to === 'platform_oncall'));
  return { message: line ? withLine(message, line) : message, broadcast: at.pages || operator };
}

/** Who reads a channel: the platform channel is the operator's; every other is a tenant's. */
export function channelAudience(config: Pick<PagingConfig, 'PLATFORM_CHANNEL'> | undefined, channel: string): PageAudience {
  return config?.PLATFORM_CHANNEL && channel === config.PLATFORM_CHANNEL ? 'platform' : 'tenant';
}

/**
 * Each rung's reach, asked in turn until one is not known to reach nobody
 * (the rungs after it are not asked: `pageTarget` never looks past it).
 */
export async function askRungs<S extends string>(directory: SlackDirectory, ladder: readonly { step: S; named: Named }[]): Promise<PageRung<S>[]> {
  const rungs: PageRung<S>[] = [];
  for (const { step, named } of ladder) {
    const accounts = new Map<string, SlackAccount | undefined>();
    for (const u of named.users ?? []) accounts.set(u, await directory.account(u));
    const reach = onCallReach(named, named.group ? await directory.groupMembers(named.group) : undefined, accounts);
    rungs.push({ step, named, reach });
    if ((named.group ? 1 : 0) + (named.users?.length ?? 0) > 0 && !reach.reachesNobody) break;
  }
  return rungs;
}

/** Whom the page names instead of its own names: the rung paged, or nobody in the tenant's channel when the platform's on-call is. */
function replacement(plan: PagePlan): Mention | undefined {
  if (plan.kind === 'fell_back') return plan.mention;
  return plan.kind === 'platform_paged' ? { users: [], groups: [] } : undefined;
}

function withLine(message: SlackMessage, line: string): SlackMessage {
  const blocks = message.blocks.length < LIMITS.messageBlocks ? [...message.blocks, { type: 'context' as const, elements: [mrkdwn(line, LIMITS.contextElementText)] }] : message.blocks;
  return { ...message, text: `${message.text}\n${line}`.slice(0, LIMITS.fallbackText), blocks };
}

/** Whom an event notifies by name: a page's `mention`, a reminder's (the on-call's for an unowned alert), or the owner a reminder is for. */
export function notifiedBy(event: PagedEvent, pages: boolean): unknown {
  const data = (event.data ?? {}) as { mention?: unknown; ownerUser?: unknown };
  if (pages) return data.mention;
  if (event.kind !== 'reminder') return undefined;
  return data.mention ?? (typeof data.ownerUser === 'string' ? { users: [data.ownerUser] } : undefined);
}

function hasMention(data: unknown): boolean {
  return !!data && typeof data === 'object' && !!(data as { mention?: unknown }).mention;
}

function mentionOf(value: unknown): Mention | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const m = value as { users?: unknown; groups?: unknown };
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { users: ids(m.users), groups: ids(m.groups) };
}
