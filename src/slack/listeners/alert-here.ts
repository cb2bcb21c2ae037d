import type { Alert, Tenant, Workflow } from '../../db/schema.js';
import { inShadow } from '../../domain/shadow.js';
import type { Scope } from '../../ledger/alert-queries.js';
import { alertInScope } from '../views/queries.js';
import { NOT_FOUND_TEXT } from './answers.js';
import type { SlackContext } from './context.js';
import { seesShadowHere } from './tenancy.js';

export const SHADOW_HERE_TEXT =
  'This alert is in shadow mode now: only the platform channel is told of it, so act on it from its thread there, where the answer does not show its state to this channel.';

export type AlertHere = { alert: Alert; workflow: Workflow; tenant: Tenant };

/**
 * The alert a click or a form names, as this channel may act on it, loaded
 * from the database (never taken from the payload): another tenant's is not
 * found, and so is one in shadow (docs/policies.md) clicked in its tenant's
 * channel, on a root or storm ⋯ menu posted before it went into shadow, by
 * someone not told of shadow alerts (`seesShadowHere`, the commands' rule).
 * Those who are told are sent to the platform channel: an answer here
 * (the message re-rendered in place) would show its state to the channel.
 */
export async function alertHere(ctx: SlackContext, a: { alertId: number; user: string; channel: string | undefined; scope: Scope }, what: string): Promise<AlertHere | { refusal: string }> {
  const found = await alertInScope(ctx.deps.db, a.alertId, a.scope);
  const shadowHere = !!found && a.scope.tenantId !== undefined && inShadow({ workflowShadow: found.workflow.shadow, tenantShadow: found.tenant.shadow });
  if (found && !shadowHere) return found;
  const told = shadowHere && (await seesShadowHere({ kind: 'tenant' }, a.user, ctx.deps.config, ctx.directory));
  ctx.deps.logger.warn({ alertId: a.alertId, user: a.user, channel: a.channel }, `refused ${what}: alert ${found ? 'in shadow, clicked in its tenant channel' : "not in this channel's scope"}`);
  return { refusal: told ? SHADOW_HERE_TEXT : NOT_FOUND_TEXT };
}
