import type { Transaction } from 'kysely';
import { describeIssues, recurringMaintenanceOf, WorkflowsFileError, type WorkflowsFile } from '../config/workflows-file.js';
import type { SecretEnv, SecretIssue } from '../config/secret-refs.js';
import type { Database, Tenant } from '../db/schema.js';
import { changedFields, type SyncOutcome } from '../domain/definition-changes.js';
import { channelRefusal } from '../domain/tenant-channels.js';
import type { RoutingConfig } from '../ledger/destinations.js';
import { hashToken, rememberSecrets } from '../secrets.js';
import type { FileSecrets } from './sync-file-secrets.js';
import { pagerKeyRefusals } from './pager-key-guard.js';

/** The tenants of the file managed over the API until now. */
export async function apiTenantsIn(trx: Transaction<Database>, file: WorkflowsFile): Promise<string[]> {
  const ids = file.tenants.map((t) => t.id);
  if (ids.length === 0) return [];
  return (await trx.selectFrom('tenants').select('id').where('id', 'in', ids).where('source', '=', 'api').orderBy('id').execute()).map((t) => t.id);
}

/**
 * Checks the file's channels against the platform channel and the tenants
 * managed over the API (src/domain/tenant-channels.ts): a clash is a config
 * error naming the field and value, and nothing is synced. Then releases
 * every file channel from whoever holds it (file tenants swapping or
 * shifting channels, a tenant gone from the file), so the unique index
 * `tenants_channel` holds at each upsert; the upserts set them again.
 */
async function claimFileChannels(trx: Transaction<Database>, file: WorkflowsFile, routing: RoutingConfig): Promise<void> {
  const fileChannels = file.tenants.map((t) => t.channel).filter((c): c is string => !!c);
  if (!fileChannels.length) return;
  const fileTenantIds = file.tenants.map((t) => t.id);
  const held = await trx.selectFrom('tenants').select(['id', 'channel', 'source']).where('channel', 'in', fileChannels).where('enabled', '=', true).execute();
  // A file tenant gone from the file is disabled by this sync: its channel is free to take.
  const holders = new Map(held.filter((h) => h.source !== 'file' && !fileTenantIds.includes(h.id)).map((h) => [h.channel!, { id: h.id, source: h.source }]));
  const issues: SecretIssue[] = [];
  file.tenants.forEach((t, i) => {
    if (!t.channel) return;
    const refusal = channelRefusal(t.channel, { platformChannel: routing.PLATFORM_CHANNEL, holder: holders.get(t.channel) });
    if (refusal) issues.push({ code: 'custom', path: ['tenants', i, 'channel'], message: `channel ${refusal}`, input: t.channel });
  });
  if (issues.length) throw new WorkflowsFileError('workflows file', describeIssues('workflows file', undefined, file, issues));
  await trx.updateTable('tenants').set({ channel: null }).where('channel', 'in', fileChannels).execute();
}

/**
 * A PagerDuty key the file removes (or changes) from a tenant while it holds
 * incidents of the tenant's open alerts is a config error naming the tenant's
 * destinations, the key's id (never the key) and the count, and nothing is
 * synced (src/services/pager-key-guard.ts): keep it `retired` until they resolve.
 */
async function refusePagerKeysCutOff(trx: Transaction<Database>, file: WorkflowsFile, secrets: FileSecrets, stored: Map<string, Tenant>, routing: RoutingConfig): Promise<void> {
  const changes = file.tenants.flatMap((t) => {
    const before = stored.get(t.id);
    return before ? [{ tenantId: t.id, before: before.destinations, after: secrets.destinations.get(t.id) ?? [] }] : [];
  });
  const refusals = await pagerKeyRefusals(trx, changes, routing);
  const lines = file.tenants.flatMap((t, i) => (refusals.get(t.id) ?? []).map((reason) => `workflows file: tenants[${i}].destinations (tenant ${t.id}): ${reason}`));
  if (lines.length) throw new WorkflowsFileError('workflows file', lines);
}

/**
 * The file's tenants upserted (a channel moving between tenants released
 * first: every one is written again); file tenants gone from it disabled.
 * What each came to, compared with what was stored, field by field; which
 * tenants this turned off, and which it turned back on.
 */
export async function syncTenants(
  trx: Transaction<Database>,
  file: WorkflowsFile,
  secrets: FileSecrets,
  env: SecretEnv,
  now: Date,
  routing: RoutingConfig,
): Promise<{ outcomes: Map<string, SyncOutcome>; turnedOff: string[]; turnedOn: string[] }> {
  const outcomes = new Map<string, SyncOutcome>();
  const fileTenantIds = file.tenants.map((t) => t.id);
  const stored = new Map(fileTenantIds.length ? (await trx.selectFrom('tenants').selectAll().where('id', 'in', fileTenantIds).execute()).map((t) => [t.id, t]) : []);
  const turnedOn = [...stored.values()].filter((t) => !t.enabled).map((t) => t.id);
  await claimFileChannels(trx, file, routing);
  await refusePagerKeysCutOff(trx, file, secrets, stored, routing);
  for (const t of file.tenants) {
    const token = t.apiTokenEnv ? env[t.apiTokenEnv] : undefined;
    rememberSecrets([token]);
    const definition = {
      name: t.name,
      channel: t.channel ?? null,
      destinations: secrets.destinations.get(t.id) ?? [],
      maintenance: recurringMaintenanceOf(t.maintenance, 'UTC'),
      secretEnvPrefix: t.secretEnvPrefix ?? null,
      launcherHosts: (t.launcherHosts ?? []).map((h) => h.toLowerCase()),
      source: 'file' as const,
      enabled: true,
      shadow: t.shadow ?? false,
      rights: t.rights ?? {},
      oncall: t.oncall ?? {},
      ownershipExpiresAfterSeconds: t.ownershipExpiresAfter ?? null,
      digest: t.digest ? { cron: t.digest.cron.trim(), timezone: t.digest.timezone } : null,
      ...(token ? { apiTokenHash: hashToken(token) } : {}),
    };
    const values = {
      ...definition,
      destinations: JSON.stringify(definition.destinations),
      maintenance: JSON.stringify(definition.maintenance),
      launcherHosts: JSON.stringify(definition.launcherHosts),
      rights: JSON.stringify(definition.rights),
      oncall: JSON.stringify(definition.oncall),
      digest: definition.digest ? JSON.stringify(definition.digest) : null,
      updatedAt: now,
    };
    await trx
      .insertInto('tenants')
      .values({ id: t.id, apiTokenHash: null, createdAt: now, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
    const before = stored.get(t.id);
    // The token's hash is compared, never shown: `apiTokenHash` names only that the token changed.
    const fields = before ? changedFields(before, definition) : [];
    outcomes.set(t.id, { key: t.id, kind: !before ? 'created' : fields.length ? 'updated' : 'unchanged', fields });
  }
  // A tenant gone from the file loses its token too: brought back over the API, it is minted a new one.
  const disabledTenants = await trx
    .updateTable('tenants')
    .set({ enabled: false, apiTokenHash: null, updatedAt: now })
    .where('source', '=', 'file')
    .where('enabled', '=', true)
    .$if(fileTenantIds.length > 0, (q) => q.where('id', 'not in', fileTenantIds))
    .returning('id')
    .execute();
  for (const { id } of disabledTenants) outcomes.set(id, { key: id, kind: 'removed', fields: [] });
  return { outcomes, turnedOff: disabledTenants.map((t) => t.id), turnedOn };
}
