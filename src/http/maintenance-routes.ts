import { Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { parseDuration } from '../domain/durations.js';
import { MAINTENANCE_MAX_MS } from '../domain/maintenance.js';
import { startMaintenance } from '../services/maintenance-windows.js';
import { findWorkflow } from '../services/workflows-api.js';
import { pauseWorkflow, resumeWorkflow, type PauseResult } from '../services/workflow-state.js';
import { ApiError, badRequest, conflict, notFound, parseInput } from './api-error.js';
import { actorName, principalOf, scopeOf } from './auth.js';


const maintenanceInput = z
  .object({
    tenant: z.string().min(1),
    /** A workflow of the tenant; absent: the whole tenant. */
    workflow: z.string().min(1).optional(),
    duration: z
      .string()
      .refine((d) => parseDuration(d) !== undefined, 'not a duration; use something like "90m", "2h" or "1h30m"')
      .refine((d) => (parseDuration(d) ?? 0) <= MAINTENANCE_MAX_MS, 'at most 7d')
      .optional(),
    durationMinutes: z.number().int().min(1).max(MAINTENANCE_MAX_MS / 60_000).optional(),
    startsAt: z.iso.datetime({ offset: true }).optional(),
    reason: z.string().min(1).max(500),
  })
  .strict()
  .superRefine((v, ctx) => {
    const given = [v.duration, v.durationMinutes].filter((d) => d !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['duration'], message: 'give "duration" (like "2h") or "durationMinutes", exactly one' });
  });

const pauseInput = z.object({ reason: z.string().min(1).max(500).optional() }).strict();

/** Maintenance windows and pause/resume of a workflow; tenant-scoped like every other route. */
export function maintenanceRoutes(deps: Deps): Router {
  const router = Router();

  router.post('/maintenance', async (req, res) => {
    const principal = principalOf(res);
    const input = parseInput(maintenanceInput, req.body ?? {});
    const durationMs = input.duration !== undefined ? parseDuration(input.duration)! : input.durationMinutes! * 60_000;
    const result = await startMaintenance(deps, {
      tenantId: input.tenant,
      workflow: input.workflow ?? null,
      durationMs,
      ...(input.startsAt ? { startsAt: new Date(input.startsAt) } : {}),
      reason: input.reason,
      actor: actorName(principal),
      scope: scopeOf(principal),
    });
    if (result.kind === 'not_found') throw notFound(input.workflow ? `workflow ${input.tenant}/${input.workflow} not found` : `tenant ${input.tenant} not found`);
    if (result.kind === 'window_limit') throw new ApiError(403, 'maintenance_limit', result.refusal.message, { limit: result.refusal.limit });
    if (result.kind === 'bad_start') throw badRequest(`body.startsAt: ${result.problem} (got ${JSON.stringify(input.startsAt ?? 'now')})`);
    const w = result.window;
    res.status(201).json({ id: w.id, tenant: w.tenantId, workflow: result.workflow, startsAt: w.startsAt, endsAt: w.endsAt, reason: w.reason, createdBy: w.createdBy });
  });

  for (const action of ['pause', 'resume'] as const) {
    router.post(`/workflows/:tenant/:name/${action}`, async (req, res) => {
      const { tenant, name } = req.params as { tenant: string; name: string };
      const principal = principalOf(res);
      const scope = scopeOf(principal);
      const body = parseInput(pauseInput, req.body && typeof req.body === 'object' ? req.body : {});
      const workflow = await findWorkflow(deps.db, tenant, name, scope);
      if (!workflow) throw notFound(`workflow ${tenant}/${name} not found`);
      const input = { workflowId: workflow.id, actor: actorName(principal), scope };
      const result: PauseResult = action === 'pause' ? await pauseWorkflow(deps, { ...input, reason: body.reason ?? null }) : await resumeWorkflow(deps, input);
      switch (result.kind) {
        case 'ok':
          res.json({ tenant, name, paused: result.workflow.paused, pausedBy: result.workflow.pausedBy, pauseReason: result.workflow.pauseReason, openAlert: result.alert ? { id: result.alert.id } : null });
          return;
        case 'not_found':
          throw notFound(`workflow ${tenant}/${name} not found`);
        case 'already_paused':
          throw conflict('already_paused', `workflow ${tenant}/${name} is already paused`);
        case 'not_paused':
          throw conflict('not_paused', `workflow ${tenant}/${name} is not paused`);
        case 'paused_by_config':
          throw conflict('paused_by_config', `workflow ${tenant}/${name} is paused by its definition ("paused": true in the workflows file or its PUT); change it there`);
      }
    });
  }

  return router;
}
