import { shownUrl } from '../domain/redact.js';
import { destinationId, resolvedDestinationSchema, type DestinationSpec } from '../config/workflows-file.js';
import type { Db } from '../db/connect.js';
import type { DigestSchedule, OnCallConfig, TenantRightsConfig } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { hashToken, newToken } from '../secrets.js';
import type { Scope } from '../ledger/alert-queries.js';
import { announceGoingLive, shadowStates } from './shadow.js';
import { announceStoredSecrets } from './stored-secrets.js';
import { enabledWorkflowsOf, resolveAlertsOfWorkflows, restartClocks } from './workflow-state.js';
import { channelRefusal } from '../domain/tenant-channels.js';
import { pagerKeyRefusals } from './pager-key-guard.js';

/** Tenants over the API: the admin creates them and mints their tokens; a tenant sees only itself. */

export interface TenantInput {
  id: string;
  name: string;
  channel?: string;
  /** Secrets resolved (the route resolves `secretEnv` / `routingKeyEnv`); stored as the file sync stores them. */
  destinations?: DestinationSpec[];
  /** Shadow mode for all of the tenant's workflows (issue 17). */
  shadow?: boolean;
  rights?: TenantRightsConfig;
  oncall?: OnCallConfig;
  ownershipExpiresAfter?: number;
  /** When the digest is posted (migration 0011); absent: only on demand. */
  digest?: DigestSchedule;
}

/** A destination as the API shows it: its outbox id and routing, never its secret, header values or the password in its URL. `idKey`: the database's destination id key. */
function destinationView(d: DestinationSpec, idKey: string | undefined) {
  const routing = { ...(d.events ? { events: d.events } : {}), ...(d.minSeverity ? { minSeverity: d.minSeverity } : {}) };
  switch (d.kind) {
    case 'slack':
      return { id: destinationId(d, idKey), kind: d.kind, channel: d.channel, ...routing };
    case 'email':
      return { id: destinationId(d, idKey), kind: d.kind, to: d.to, ...routing };
    case 'webhook':
      return { id: destinationId(d, idKey), kind: d.kind, url: shownUrl(d.url), headers: Object.keys(d.headers ?? {}), hasSecret: true, ...routing };
    case 'pagerduty':
      return { id: destinationId(d, idKey), kind: d.kind, hasRoutingKey: true, ...(d.retired ? { retired: true } : {}), ...routing };
  }
}

const tenantView = (
  t: {
  id: string;
  name: string;
  channel: string | null;
  source: string;
  apiTokenHash: string | null;
  destinations: unknown;
  rights: TenantRightsConfig;
  oncall: OnCallConfig;
  ownershipExpiresAfterSeconds: number | null;
  shadow: boolean;
  digest: DigestSchedule | null;
  },
  idKey: string | undefined,
) => ({
  id: t.id,
  name: t.name,
  channel: t.channel,
  source: t.source,
  shadow: t.shadow,
  hasToken: t.apiTokenHash !== null,
  destinations: storedDestinations(t.destinations).map((d) => destinationView(d, idKey)),
  rights: t.rights,
  oncall: t.oncall,
  ownershipExpiresAfterSeconds: t.ownershipExpiresAfterSeconds,
  digest: t.digest,
});

/** Rows are written validated; one that no longer parses (hand-edited) is left out of the view, as routing leaves it out. */
function storedDestinations(stored: unknown): DestinationSpec[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((d) => {
    const parsed = resolvedDestinationSchema.safeParse(d);
    return parsed.success ? [parsed.data] : [];
  });
}

export async function listTenants(db: Db, scope: Scope, idKey: string | undefined) {
  const rows = await db
    .selectFrom('tenants')
    .selectAll()
    .where('enabled', '=', true)
    .$if(scope.tenantId !== undefined, (q) => q.where('id', '=', scope.tenantId!))
    .orderBy('id')
    .execute();
  return rows.map((t) => tenantView(t, idKey));
}

export type PutTenantResult = { kind: 'created' | 'updated'; tenant: ReturnType<typeof tenantView> } | { kind: 'owned_by_file' } | { kind: 'channel_taken'; reason: string }
  /** A PagerDuty key the body removes or changes still holds incidents of open alerts (src/services/pager-key-guard.ts): nothing written. */
  | { kind: 'pager_key_held'; reasons: string[] };

export async function putTenant(deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: TenantInput): Promise<PutTenantResult> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<PutTenantResult> => {
    const current = await trx.selectFrom('tenants').selectAll().where('id', '=', input.id).forUpdate().executeTakeFirst();
    if (current?.source === 'file' && current.enabled) return { kind: 'owned_by_file' };
    if (input.channel) {
      const holder = await trx.selectFrom('tenants').select(['id', 'source']).where('channel', '=', input.channel).where('enabled', '=', true).where('id', '!=', input.id).executeTakeFirst();
      const refusal = channelRefusal(input.channel, { platformChannel: deps.config.PLATFORM_CHANNEL, holder });
      if (refusal) return { kind: 'channel_taken', reason: refusal };
    }
    const held = current && (await pagerKeyRefusals(trx, [{ tenantId: input.id, before: current.destinations, after: input.destinations ?? [] }], deps.config)).get(input.id);
    if (held) return { kind: 'pager_key_held', reasons: held };
    // PUT replaces: destinations left out of the body mean none, as a tenant in the file without them has none.
    const values = {
      name: input.name,
      channel: input.channel ?? null,
      destinations: JSON.stringify(input.destinations ?? []),
      rights: JSON.stringify(input.rights ?? {}),
      oncall: JSON.stringify(input.oncall ?? {}),
      ownershipExpiresAfterSeconds: input.ownershipExpiresAfter ?? null,
      digest: input.digest ? JSON.stringify({ cron: input.digest.cron.trim(), timezone: input.digest.timezone }) : null,
      shadow: input.shadow ?? false,
      source: 'api' as const,
      enabled: true,
      updatedAt: now,
    };
    const shadowBefore = await shadowStates(trx, { tenantId: input.id });
    const tenant = current
      ? await trx.updateTable('tenants').set(values).where('id', '=', input.id).returningAll().executeTakeFirstOrThrow()
      : await trx.insertInto('tenants').values({ id: input.id, apiTokenHash: null, createdAt: now, ...values }).returningAll().executeTakeFirstOrThrow();
    // A tenant the file dropped, brought back here: its workflows were watched by nobody meanwhile.
    if (current && !current.enabled) await restartClocks(trx, [input.id], now);
    await announceGoingLive(trx, shadowBefore, now, deps.config, { tenantId: input.id });
    await announceStoredSecrets(trx, input.destinations ?? []);
    // A removed (disabled) one brought back did not exist a moment before: created, with its history.
    return { kind: current?.enabled ? 'updated' : 'created', tenant: tenantView(tenant, deps.config.destinationIdKey) };
  });
}

/**
 * A new API token for a tenant, returned once: only its hash is stored, and
 * minting replaces (revokes) the previous one. A tenant whose token comes
 * from the workflows file (`apiTokenEnv`) gets that one back at the next start.
 */
export async function mintTenantToken(deps: Pick<Deps, 'db' | 'clock'>, tenantId: string): Promise<{ kind: 'minted'; token: string } | { kind: 'not_found' }> {
  const token = newToken();
  const result = await deps.db
    .updateTable('tenants')
    .set({ apiTokenHash: hashToken(token), updatedAt: deps.clock.now() })
    .where('id', '=', tenantId)
    .where('enabled', '=', true)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? { kind: 'minted', token } : { kind: 'not_found' };
}

export type DeleteTenantResult = { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'owned_by_file' };

/**
 * Removes a tenant made over the API as the file removes one of its own:
 * disabled, never deleted, so its history stays. Its token is revoked,
 * its channel is free for another tenant, its workflows neither fire nor are
 * missed nor take pings, and their open alerts are resolved in the same
 * transaction (`by: "tenant_disabled"`, the actor saying who): nothing could
 * ever close them otherwise. PUT /tenants/{id} brings it back, its workflows
 * starting from the next tick to come.
 */
export async function deleteTenant(deps: Pick<Deps, 'db' | 'clock' | 'config'>, id: string, actor: string): Promise<DeleteTenantResult> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<DeleteTenantResult> => {
    const current = await trx.selectFrom('tenants').select(['id', 'source']).where('id', '=', id).where('enabled', '=', true).forUpdate().executeTakeFirst();
    if (!current) return { kind: 'not_found' };
    if (current.source === 'file') return { kind: 'owned_by_file' };
    // Its token is revoked, not only refused while it is gone: brought back, it gets a new one.
    await trx.updateTable('tenants').set({ enabled: false, apiTokenHash: null, updatedAt: now }).where('id', '=', id).execute();
    await resolveAlertsOfWorkflows(trx, await enabledWorkflowsOf(trx, [id]), 'tenant_disabled', actor, now, deps.config);
    return { kind: 'deleted' };
  });
}
