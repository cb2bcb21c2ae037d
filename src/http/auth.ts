import type { RequestHandler, Response } from 'express';
import type { Deps } from '../deps.js';
import type { Scope } from '../ledger/alert-queries.js';
import { launchSigningKey } from '../domain/launch-signing.js';
import { callbackTokenFor, runIdOfCallbackToken } from '../launch/signature.js';
import { hashToken, rememberSecrets, sameSecret } from '../secrets.js';
import { forbidden, notFound, unauthorized } from './api-error.js';

/**
 * Who is calling: the admin (API_TOKEN, every tenant), a tenant (its own
 * token, its own rows only), or the far side of one callback launch (a
 * per-run token that may finish that run and nothing else).
 */
export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string } | { kind: 'run'; runId: number };

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return (header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null)?.[1];
}

/** Whether `token` is one of `accepted` (digests compared: equal length always, so constant-time). */
export function oneOfTokens(token: string, accepted: (string | undefined)[]): boolean {
  const given = hashToken(token);
  return accepted.some((t) => t !== undefined && sameSecret(given, hashToken(t)));
}

export async function authenticate(deps: Pick<Deps, 'db' | 'config'>, header: string | undefined): Promise<Principal> {
  const token = bearerToken(header);
  if (token === undefined) throw unauthorized('missing "Authorization: Bearer <token>" header');
  const given = hashToken(token);
  if (oneOfTokens(token, [deps.config.API_TOKEN])) return { kind: 'admin' };

  const runId = runIdOfCallbackToken(token);
  if (runId !== undefined) {
    const run = await deps.db
      .selectFrom('runs')
      .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
      .select('workflows.launcher')
      .where('runs.id', '=', runId)
      .executeTakeFirst();
    const key = run?.launcher?.kind === 'http' ? launchSigningKey(run.launcher, deps.config.LAUNCHER_SECRET) : undefined;
    if (key?.ok && sameSecret(callbackTokenFor(key.secret, runId), token)) return { kind: 'run', runId };
    throw unauthorized('invalid token');
  }

  // The stored form is the digest, so looking it up leaks nothing the digest would not.
  const tenant = await deps.db.selectFrom('tenants').select(['id', 'apiTokenHash']).where('apiTokenHash', '=', given).where('enabled', '=', true).executeTakeFirst();
  if (tenant?.apiTokenHash && sameSecret(tenant.apiTokenHash, given)) {
    // Only its digest is stored, so the redactor learns the value when it is first used (src/secrets.ts).
    rememberSecrets([token]);
    return { kind: 'tenant', tenantId: tenant.id };
  }
  throw unauthorized('invalid token');
}

export function requireAuth(deps: Pick<Deps, 'db' | 'config'>): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await authenticate(deps, req.get('authorization'));
    next();
  };
}

export function principalOf(res: Response): Principal {
  const p = res.locals.principal as Principal | undefined;
  if (!p) throw new Error('route mounted without requireAuth');
  return p;
}

/** The tenant rows a principal may see. A run token sees no workflow or tenant at all. */
export function scopeOf(principal: Principal): Scope {
  if (principal.kind === 'admin') return {};
  if (principal.kind === 'tenant') return { tenantId: principal.tenantId };
  throw notFound('not found');
}

export function requireAdmin(principal: Principal): void {
  if (principal.kind !== 'admin') throw forbidden('this endpoint needs the admin token (API_TOKEN)');
}

/** Who did it, for the ledger and alert history. */
export function actorName(principal: Principal): string {
  if (principal.kind === 'admin') return 'api:admin';
  if (principal.kind === 'tenant') return `api:${principal.tenantId}`;
  return `api:run-${principal.runId}`;
}
