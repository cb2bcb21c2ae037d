import { codeSpan, escapeMrkdwn } from '../../blocks/limits.js';
import { USAGE, usageCode } from '../../blocks/help.js';
import { digestOnDemand } from '../../views/digest.js';
import type { SlackScope } from '../tenancy.js';
import type { SlackContext } from '../context.js';
import { tenantSuggestion } from './tenant-suggestions.js';

/**
 * `/scheduler digest`: the tenant's digest of the last 24 hours, ephemeral.
 * A tenant channel sees its own tenant; the platform channel names one.
 */
export async function digestCommand(
  ctx: SlackContext,
  where: Exclude<SlackScope, { kind: 'unlinked' }>,
  wanted: string | undefined,
  now: Date,
): Promise<{ text: string; blocks?: never }> {
  let tenant: { id: string; name: string } | undefined;
  if (where.kind === 'tenant') {
    if (wanted && wanted !== where.tenant.id) return { text: `This channel belongs to *${escapeMrkdwn(where.tenant.name)}*; \`/scheduler digest\` here shows its digest.` };
    tenant = where.tenant;
  } else {
    if (!wanted) return { text: `In the platform channel, name the tenant.\nUsage: ${usageCode(USAGE.digest!)}` };
    tenant = await ctx.deps.db.selectFrom('tenants').select(['id', 'name']).where('id', '=', wanted).where('enabled', '=', true).executeTakeFirst();
    if (!tenant) return { text: `No tenant ${codeSpan(wanted, 100)}.${await tenantSuggestion(ctx, where, wanted)}` };
  }
  const digest = await digestOnDemand(ctx.deps, tenant.id, now);
  if (!digest) return { text: `Nothing to report for *${escapeMrkdwn(tenant.name)}* in the last 24 hours: nothing broken, flapping, failing, silenced or in maintenance.` };
  return { text: digest.text, blocks: digest.blocks as never };
}
