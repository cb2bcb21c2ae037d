import type { LauncherSpec, WorkflowSpec } from '../config/workflows-file.js';
import type { Deps } from '../deps.js';
import { hostAllowed, parseAllowList } from '../domain/address-policy.js';
import { forbidden } from './api-error.js';
import type { Principal } from './auth.js';

/**
 * What a tenant token may put in a workflow (docs/security.md): no command
 * launcher (it would run on the bot's host), no chosen ping key (keys are
 * generated, so none can be guessed or probed), http launchers only to hosts
 * the operator allows, and `secretEnv` only under the prefix the operator
 * reserved for the tenant. Checked before anything is resolved or stored: a
 * refusal says the same whether a named variable exists or not.
 */
export async function checkTenantWorkflow(deps: Pick<Deps, 'db' | 'config'>, principal: Principal, spec: WorkflowSpec): Promise<void> {
  if (principal.kind !== 'tenant') return;
  if (spec.pingKey !== undefined) {
    throw forbidden("body.pingKey: a tenant token cannot choose a ping key (fixed keys are for the operator's workflows file); leave it out and a 128-bit key is generated");
  }
  if (spec.launcher) await checkTenantLauncher(deps, principal.tenantId, spec.launcher);
}

async function checkTenantLauncher(deps: Pick<Deps, 'db' | 'config'>, tenantId: string, launcher: LauncherSpec): Promise<void> {
  if (launcher.kind === 'command') {
    throw forbidden(
      'body.launcher.kind: "command" launchers run on the bot\'s host, so only the operator sets them (the workflows file or the admin token); use an "http" launcher to a host the operator allows',
    );
  }
  const tenant = await deps.db.selectFrom('tenants').select(['secretEnvPrefix', 'launcherHosts']).where('id', '=', tenantId).executeTakeFirst();
  const host = new URL(launcher.url).hostname;
  if (!hostAllowed(host, parseAllowList([...deps.config.HTTP_LAUNCHER_ALLOWED_HOSTS, ...(tenant?.launcherHosts ?? [])]))) {
    throw forbidden(
      `body.launcher.url: host ${JSON.stringify(host)} is not on the operator's allow-list for tenant ${tenantId} (HTTP_LAUNCHER_ALLOWED_HOSTS, or the tenant's "launcherHosts" in the workflows file)`,
    );
  }
  if (launcher.secret === undefined && launcher.secretEnv === undefined) {
    throw forbidden(
      'body.launcher.secret: a tenant\'s http launcher needs a signing secret of its own ("secret", at least 16 characters, or "secretEnv"); LAUNCHER_SECRET signs only launchers the operator set',
    );
  }
  if (launcher.secretEnv !== undefined) {
    const prefix = tenant?.secretEnvPrefix;
    if (!prefix) throw forbidden(`body.launcher.secretEnv: no environment prefix is reserved for tenant ${tenantId}; give "secret" instead, or ask the operator to set "secretEnvPrefix"`);
    if (!launcher.secretEnv.startsWith(prefix)) throw forbidden(`body.launcher.secretEnv: tenant ${tenantId} may name only variables starting with ${prefix}`);
  }
}
