import { Router } from 'express';
import { resolveDestinations } from '../config/secret-refs.js';
import { tenantSchema } from '../config/workflows-file.js';
import type { Deps } from '../deps.js';
import { rememberSecrets, secretsOfEntry } from '../secrets.js';
import { deleteTenant, listTenants, mintTenantToken, putTenant } from '../services/tenants-api.js';
import { badRequest, conflict, invalidInput, notFound, parseInput } from './api-error.js';
import { actorName, principalOf, requireAdmin, scopeOf } from './auth.js';

const tenantInput = tenantSchema.pick({ id: true, name: true, channel: true, destinations: true, shadow: true, rights: true, oncall: true, ownershipExpiresAfter: true, digest: true });

/** Tenants: a tenant sees itself; the admin lists, creates, removes and mints tokens. */
export function tenantsRoutes(deps: Deps): Router {
  const router = Router();

  router.get('/tenants', async (_req, res) => {
    res.json({ tenants: await listTenants(deps.db, scopeOf(principalOf(res)), deps.config.destinationIdKey) });
  });

  router.put('/tenants/:id', async (req, res) => {
    requireAdmin(principalOf(res));
    const body: unknown = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: expected a JSON object like {"name": "Acme", "channel": "C0123ABCD"}');
    const raw = { ...body, id: req.params.id };
    const input = parseInput(tenantInput, raw);
    // Secrets named by environment variable are resolved on the way in, as the file sync does (see sync-workflows.ts).
    const destinations = resolveDestinations(input.destinations ?? [], process.env, ['destinations']);
    if (!destinations.ok) throw invalidInput(destinations.issues, raw);
    rememberSecrets(destinations.value.flatMap(secretsOfEntry));
    const result = await putTenant(deps, { ...input, destinations: destinations.value });
    if (result.kind === 'owned_by_file') throw conflict('owned_by_file', `tenant ${input.id} is declared in the workflows file; change it there`);
    if (result.kind === 'channel_taken') throw conflict('channel_taken', `body.channel: ${input.channel} ${result.reason}`);
    // Named by its id (a digest), never the key: the body held it, but answers and logs never repeat a secret.
    if (result.kind === 'pager_key_held') throw conflict('pager_key_held', result.reasons.map((r) => `body.destinations: ${r}`).join('; '));
    res.status(result.kind === 'created' ? 201 : 200).json(result.tenant);
  });

  router.delete('/tenants/:id', async (req, res) => {
    const principal = principalOf(res);
    requireAdmin(principal);
    const id = req.params.id!;
    const result = await deleteTenant(deps, id, actorName(principal));
    if (result.kind === 'not_found') throw notFound(`tenant ${id} not found`);
    if (result.kind === 'owned_by_file') throw conflict('owned_by_file', `tenant ${id} is declared in the workflows file; remove it there`);
    res.json({ deleted: true, id });
  });

  router.post('/tenants/:id/token', async (req, res) => {
    requireAdmin(principalOf(res));
    const result = await mintTenantToken(deps, req.params.id!);
    if (result.kind === 'not_found') throw notFound(`tenant ${req.params.id} not found`);
    // Shown once: only its hash is kept.
    res.status(201).json({ tenant: req.params.id, token: result.token });
  });

  return router;
}
