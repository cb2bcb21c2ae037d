import { codeSpan } from '../../blocks/limits.js';
import type { SlackScope } from '../tenancy.js';
import type { SlackContext } from '../context.js';
import { closestNames } from './closest-names.js';

/**
 * " Did you mean `acme`?" for a tenant id not found (DESIGN.md: unknown names
 * get suggestions), or '' when none is close. Only the tenants the channel may
 * name are candidates: every enabled tenant in the platform channel, its own
 * in a tenant's channel, so a tenant's people never learn another's id.
 * `suffix` is appended to each name offered (`/*` for a tenant-wide window).
 */
export async function tenantSuggestion(ctx: SlackContext, where: Exclude<SlackScope, { kind: 'unlinked' }>, wanted: string, suffix = ''): Promise<string> {
  const ids =
    where.kind === 'tenant'
      ? [where.tenant.id]
      : (await ctx.deps.db.selectFrom('tenants').select('id').where('enabled', '=', true).orderBy('id').execute()).map((t) => t.id);
  const close = closestNames(wanted, ids);
  return close.length ? ` Did you mean ${close.map((id) => codeSpan(`${id}${suffix}`, 200)).join(', ')}?` : '';
}
