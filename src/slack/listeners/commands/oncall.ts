import type { Tenant } from '../../../db/schema.js';
import { onCallReach, pageTarget } from '../../../domain/oncall-reach.js';
import type { SlackAccount } from '../../../domain/rights.js';
import { groupMention, userMention } from '../../blocks/format.js';
import { escapeMrkdwn } from '../../blocks/limits.js';
import { onCallNoteText } from '../../blocks/oncall-notes.js';
import { askRungs } from '../../transport/page-reach.js';
import type { SlackDirectory } from '../../transport/directory.js';
import type { SlackContext } from '../context.js';
import type { SlackScope } from '../tenancy.js';

/**
 * `/scheduler oncall`: who each tenant's escalations page, and, asking Slack,
 * whether they reach anyone (src/domain/oncall-reach.ts): an empty, disabled
 * or deleted group and a deactivated or bot user are named as such.
 */
export async function onCallText(ctx: SlackContext, where: Exclude<SlackScope, { kind: 'unlinked' }>): Promise<string> {
  const tenants = where.kind === 'tenant' ? [where.tenant] : await ctx.deps.db.selectFrom('tenants').selectAll().where('enabled', '=', true).orderBy('id').execute();
  const lines: string[] = [];
  for (const t of tenants) lines.push(await tenantLine(ctx, t));
  return [`On call${where.kind === 'tenant' ? '' : ' per tenant'}:`, ...lines].join('\n');
}

async function tenantLine(ctx: SlackContext, t: Tenant): Promise<string> {
  const oncall = t.oncall ?? {};
  const who = [...(oncall.group ? [groupMention(oncall.group)] : []), ...(oncall.users ?? []).map(userMention)];
  const name = `• *${escapeMrkdwn(t.name)}*: `;
  if (!who.length) return `${name}nobody named (\`oncall\` in the workflows file); unowned escalations are broadcast to the channel without a mention`;
  const directory = ctx.directory;
  if (!directory) return name + who.join(', ');
  const group = oncall.group ? await directory.groupMembers(oncall.group) : undefined;
  const accounts = new Map<string, SlackAccount | undefined>();
  for (const u of oncall.users ?? []) accounts.set(u, await directory.account(u));
  const reach = onCallReach(oncall, group, accounts);
  const notes = reach.notes.map(onCallNoteText);
  const warning = reach.reachesNobody ? ` :warning: *Escalations page nobody*: fix \`oncall\` in the workflows file; ${await fallsTo(ctx, directory)}.` : '';
  return `${name}${who.join(', ')}${notes.length ? ` (${notes.join('; ')})` : ''}${warning}`;
}

/**
 * Where a tenant's pages go while its on-call reaches nobody: the rung after
 * it (docs/alerts.md, "A page that reaches nobody"), asked of Slack as a page
 * would ask. The platform's on-call is never named: the tenant may be reading.
 */
async function fallsTo(ctx: SlackContext, directory: SlackDirectory): Promise<string> {
  const { PLATFORM_CHANNEL: channel, PLATFORM_ONCALL: platform } = ctx.deps.config;
  const rungs = channel && platform ? await askRungs(directory, [{ step: 'platform_oncall', named: platform }]) : [];
  if (pageTarget(rungs).kind === 'page') return "until then its pages fall to the platform's on-call";
  return channel ? 'until then its pages reach nobody (they are broadcast in the platform channel with a warning)' : 'until then its pages reach nobody';
}
