import { Router, type Request, type Response } from 'express';
import { resolveLauncher } from '../config/secret-refs.js';
import { workflowSchema } from '../config/workflows-file.js';
import type { Deps } from '../deps.js';
import { requestRunNow } from '../services/run-now.js';
import { deleteWorkflow, findWorkflow, listWorkflows, policyVersions, putWorkflow, workflowView } from '../services/workflows-api.js';
import { ApiError, badRequest, conflict, forbidden, invalidInput, notFound, parseInput } from './api-error.js';
import { actorName, principalOf, scopeOf } from './auth.js';
import { checkTenantWorkflow } from './launcher-trust.js';
import { rememberSecrets, secretsOfEntry } from '../secrets.js';
import { secretScope } from '../domain/redact.js';

/** Workflows: list, view, create/replace, delete (disable), and run now. */
export function workflowsRoutes(deps: Deps): Router {
  const router = Router();
  const missing = (tenant: string, name: string) => notFound(`workflow ${tenant}/${name} not found`);

  router.get('/workflows', async (_req, res) => {
    res.json({ workflows: await listWorkflows(deps.db, scopeOf(principalOf(res))) });
  });

  router.get('/workflows/:tenant/:name', async (req, res) => {
    const { tenant, name } = req.params as { tenant: string; name: string };
    const workflow = await findWorkflow(deps.db, tenant, name, scopeOf(principalOf(res)));
    if (!workflow) throw missing(tenant, name);
    res.json(await workflowView(deps, workflow, 10, scopeOf(principalOf(res)).tenantId));
  });

  router.get('/workflows/:tenant/:name/policy-versions', async (req, res) => {
    const { tenant, name } = req.params as { tenant: string; name: string };
    const workflow = await findWorkflow(deps.db, tenant, name, scopeOf(principalOf(res)));
    if (!workflow) throw missing(tenant, name);
    res.json({ tenant, name, current: workflow.policyVersion, versions: await policyVersions(deps.db, workflow.id) });
  });

  router.put('/workflows/:tenant/:name', (req, res) => putWorkflowRoute(deps, req, res));

  router.delete('/workflows/:tenant/:name', async (req, res) => {
    const { tenant, name } = req.params as { tenant: string; name: string };
    const principal = principalOf(res);
    const result = await deleteWorkflow(deps, tenant, name, scopeOf(principal), actorName(principal));
    if (result.kind === 'not_found') throw missing(tenant, name);
    if (result.kind === 'owned_by_file') throw conflict('owned_by_file', `workflow ${tenant}/${name} is declared in the workflows file; remove it there`);
    if (result.kind === 'operator_launcher') throw forbidden(`workflow ${tenant}/${name} has a launcher the operator set; only the operator (the workflows file or the admin token) can remove it`);
    res.json({ deleted: true, tenant, name });
  });

  router.post('/workflows/:tenant/:name/run', async (req, res) => {
    const { tenant, name } = req.params as { tenant: string; name: string };
    const principal = principalOf(res);
    const scope = scopeOf(principal);
    const workflow = await findWorkflow(deps.db, tenant, name, scope);
    if (!workflow) throw missing(tenant, name);
    const result = await requestRunNow(deps, { workflowId: workflow.id, actor: { user: actorName(principal) }, scope });
    switch (result.kind) {
      case 'started':
        // paused: a one-off run of a paused workflow; its schedule stays paused until resumed.
        res.status(202).json({ id: result.run.id, status: result.run.status, trigger: result.run.trigger, requestedBy: result.run.requestedBy, paused: result.paused });
        return;
      case 'no_launcher':
        throw conflict('no_launcher', `workflow ${tenant}/${name} has no launcher: only its own scheduler can run it`);
      case 'already_running':
        throw conflict('already_running', `workflow ${tenant}/${name} is already running (run ${result.run.id})`, { run: { id: result.run.id } });
      case 'not_found':
        throw missing(tenant, name);
    }
  });

  return router;
}

/**
 * PUT /workflows/:tenant/:name: the body is a workflow as in the workflows
 * file; the URL names it. Created (201) or replaced (200).
 */
async function putWorkflowRoute(deps: Deps, req: Request, res: Response): Promise<void> {
  const { tenant, name } = req.params as { tenant: string; name: string };
  const principal = principalOf(res);
  const scope = scopeOf(principal);
  const body: unknown = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('body: expected a JSON object describing the workflow (the same fields as in the workflows file)');
  for (const field of ['tenant', 'name'] as const) {
    const given = (body as Record<string, unknown>)[field];
    const path = field === 'tenant' ? tenant : name;
    if (given !== undefined && given !== path) throw badRequest(`body.${field}: ${JSON.stringify(given)} differs from the URL's ${JSON.stringify(path)}`);
  }
  const input = { ...body, tenant, name };
  const spec = parseInput(workflowSchema, input);
  if (scope.tenantId !== undefined && scope.tenantId !== tenant) throw notFound(`tenant ${tenant} not found`);
  await checkTenantWorkflow(deps, principal, spec);
  // A launcher's `secretEnv` is resolved on the way in, as the file sync does (see sync-workflows.ts).
  const launcher = spec.launcher ? resolveLauncher(spec.launcher, process.env, ['launcher']) : undefined;
  if (launcher && !launcher.ok) throw invalidInput(launcher.issues, input);
  const trusted = launcher && principal.kind === 'admin' ? { ...launcher.value, operatorSet: true } : launcher?.value;
  if (trusted) rememberSecrets(secretsOfEntry(trusted), secretScope(trusted, tenant));
  const result = await putWorkflow(deps, { ...spec, launcher: trusted }, scope, actorName(principal));
  switch (result.kind) {
    case 'created':
    case 'updated':
      res.status(result.kind === 'created' ? 201 : 200).json(await workflowView(deps, result.workflow, 10, scope.tenantId));
      return;
    case 'tenant_not_found':
      throw notFound(`tenant ${tenant} not found`);
    case 'owned_by_file':
      throw conflict('owned_by_file', `workflow ${tenant}/${name} is declared in the workflows file; change it there`);
    case 'operator_launcher':
      throw forbidden(`workflow ${tenant}/${name} has a launcher the operator set; only the operator (the workflows file or the admin token) can change it`);
    case 'ping_key_taken':
      throw conflict('ping_key_taken', 'body.pingKey: another workflow already uses this ping key');
    case 'workflow_limit':
      throw new ApiError(403, 'workflow_limit', result.refusal.message, { limit: result.refusal.limit });
    case 'bad_dependencies':
      throw invalidInput(
        result.issues.map((i) => ({ code: 'custom' as const, path: ['dependsOn', i.dep], message: i.message, input: undefined })),
        input,
      );
  }
}
