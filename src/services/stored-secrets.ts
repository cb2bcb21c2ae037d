import { sql, type Transaction } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';
import { secretScope } from '../domain/redact.js';
import { rememberSecrets, replaceTenantSecrets, secretsOfEntry } from '../secrets.js';

/**
 * Teaches the redactor the secrets in the database (launchers and
 * destinations set over the API before this replica started, or by another
 * replica since): a run's output must be redacted whoever set the secret it
 * echoes. A launcher a tenant set is that tenant's (src/secrets.ts); the
 * rest the operator set (destinations are set by the admin token or the
 * file only). Read at start and again whenever any replica stores a secret
 * (`TENANT_SECRETS_CHANNEL`, the `secrets-refresh` loop).
 */
export async function rememberStoredSecrets(db: Db): Promise<void> {
  const tenants = await db.selectFrom('tenants').select('destinations').execute();
  const workflows = await db.selectFrom('workflows').select(['tenantId', 'launcher']).where('launcher', 'is not', null).execute();
  rememberSecrets(tenants.flatMap((t) => (Array.isArray(t.destinations) ? t.destinations : [])).flatMap(secretsOfEntry));
  const own = new Map<string, string[]>();
  for (const w of workflows) {
    const scope = secretScope(w.launcher, w.tenantId);
    if (scope === undefined) rememberSecrets(secretsOfEntry(w.launcher));
    else own.set(scope, [...(own.get(scope) ?? []), ...secretsOfEntry(w.launcher)]);
  }
  replaceTenantSecrets(own);
}

/** Told (after commit) when a launcher's or a destination's secret is stored: every replica reads them again. */
export const TENANT_SECRETS_CHANNEL = 'scheduler_tenant_secrets';

/** In the transaction that stores `entries` (launchers, destinations): the NOTIFY, when any of them holds a secret. */
export async function announceStoredSecrets(trx: Transaction<Database>, entries: unknown[]): Promise<void> {
  if (entries.some((e) => secretsOfEntry(e).length > 0)) await sql`select pg_notify(${TENANT_SECRETS_CHANNEL}, '')`.execute(trx);
}

/**
 * Keeps this replica's redactor in step with secrets stored by the others:
 * woken by `TENANT_SECRETS_CHANNEL`, and every few minutes in case a NOTIFY
 * was missed (the wake-up connection was down, or the database was when the
 * replica started).
 */
export function secretsRefreshLoop(deps: Pick<Deps, 'db'>): LoopSpec {
  return {
    name: 'secrets-refresh',
    intervalMs: SECRETS_REFRESH_MS,
    tick: async () => {
      await rememberStoredSecrets(deps.db);
      return false;
    },
    wakeOn: [TENANT_SECRETS_CHANNEL],
  };
}
const SECRETS_REFRESH_MS = 5 * 60_000;
