import type { Tenant } from '../../../db/schema.js';
import { onCallReach } from '../../../domain/oncall-reach.js';
import type { SlackAccount } from '../../../domain/rights.js';
import { groupMention, userMention } from '../../blocks/format.js';
import { escapeMrkdwn } from '../../blocks/limits.js';
import { onCallNoteText } from '../../blocks/oncall-notes.js';
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
  const warning = reach.reachesNobody ? ' :warning: *Escalations page nobody*: fix `oncall` in the workflows file.' : '';
  return `${name}${who.join(', ')}${notes.length ? ` (${notes.join('; ')})` : ''}${warning}`;
}
