import type { Db } from '../db/connect.js';
import { rememberSecrets, secretsOfEntry } from '../secrets.js';

/**
 * Teaches the redactor the secrets already in the database (launchers and
 * destinations set over the API before this replica started, or by another
 * replica): a run's output must be redacted whoever set the secret it echoes.
 */
export async function rememberStoredSecrets(db: Db): Promise<void> {
  const tenants = await db.selectFrom('tenants').select('destinations').execute();
  const workflows = await db.selectFrom('workflows').select('launcher').where('launcher', 'is not', null).execute();
  rememberSecrets(tenants.flatMap((t) => (Array.isArray(t.destinations) ? t.destinations : [])).flatMap(secretsOfEntry));
  rememberSecrets(workflows.flatMap((w) => secretsOfEntry(w.launcher)));
}
