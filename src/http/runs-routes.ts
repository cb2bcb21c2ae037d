import { Router, type Response } from 'express';
import { isWebLink, LOG_URL_MAX } from '../domain/text.js';
import { z } from 'zod';
import type { Run } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { reportedEndError, reportedStatusOf } from '../domain/reported-outcome.js';
import { EARLIEST_TICK } from '../domain/tick-match.js';
import { finishReportedRun, reportRun } from '../services/ingest.js';
import { ApiError, badRequest, conflict, notFound, parseInput } from './api-error.js';
import { principalOf, scopeOf } from './auth.js';
import { positiveId } from './input-guards.js';
import { TenantReportLimiter } from './tenant-report-limiter.js';

const LOG_LIMIT = 100_000;

const detail = {
  error: z.string().max(10_000).optional(),
  stage: z.string().max(200).optional(),
  rows: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  logUrl: z.string().refine(isWebLink, `must be an http(s) URL of at most ${LOG_URL_MAX} characters, without spaces, quotes or angle brackets`).optional(),
  /** The run's output (its tail is what helps): kept as the log excerpt. */
  log: z.string().max(LOG_LIMIT).optional(),
};

export const runReportSchema = z
  .object({
    tenant: z.string().min(1).max(63),
    workflow: z.string().min(1).max(100),
    status: z.enum(['running', 'succeeded', 'failed']),
    tick: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .refine((t) => t >= EARLIEST_TICK, `must be ${EARLIEST_TICK.toISOString()} or later`)
      .optional(),
    externalId: z.string().min(1).max(200).optional(),
    /** How long a run reported only by its end took (a start report's run is timed from its start). */
    durationSeconds: z.number().min(0).max(7 * 86_400).optional(),
    ...detail,
  })
  .strict()
  .refine((r) => r.durationSeconds === undefined || r.status !== 'running', { path: ['durationSeconds'], message: 'only a finished run has a duration' });

export const runFinishSchema = z
  .object({
    status: z.enum(['succeeded', 'failed']),
    // The column is a 32-bit integer; an exit status is far smaller still.
    exitCode: z.number().int().min(-2_147_483_648).max(2_147_483_647).optional(),
    ...detail,
  })
  .strict();

const runView = (run: Run) => ({ id: run.id, tick: run.tick, status: run.status, trigger: run.trigger, durationSeconds: run.durationSeconds });
/** An end that came after the bot failed its run as timed out: recorded as the run's note, the run still failed. */
const endedLateView = (run: Run) => ({ ...runView(run), endedLate: true, note: run.outcomeNote });

/** A tenant token's report past its TENANT_REPORTS_PER_MINUTE: 429 with Retry-After, before anything is read or stored. */
function admitReport(deps: Deps, limiter: TenantReportLimiter, res: Response): void {
  const principal = principalOf(res);
  if (principal.kind !== 'tenant') return;
  const admission = limiter.admit(principal.tenantId, deps.clock.now().getTime());
  if (admission.ok) return;
  res.set('retry-after', String(admission.retryAfterSeconds));
  throw new ApiError(429, 'rate_limited', admission.message, { limit: admission.limit });
}

/** POST /api/v1/runs (report a run) and POST /api/v1/runs/:id (finish one). */
export function runsRoutes(deps: Deps, shared?: TenantReportLimiter): Router {
  const router = Router();
  let own: TenantReportLimiter | undefined;
  // Made at the first report when not shared with the pings (a router listed for its routes only reads no config).
  const limiter = () => shared ?? (own ??= new TenantReportLimiter(deps.config.TENANT_REPORTS_PER_MINUTE));

  router.post('/runs', async (req, res) => {
    admitReport(deps, limiter(), res);
    const principal = principalOf(res);
    const report = parseInput(runReportSchema, req.body);
    const result = await reportRun(deps, report, scopeOf(principal));
    switch (result.kind) {
      case 'created':
        res.status(201).json(runView(result.run));
        return;
      case 'existing':
        res.status(200).json({ ...runView(result.run), duplicate: true });
        return;
      case 'ended_late':
        res.status(200).json(endedLateView(result.run));
        return;
      case 'not_found':
        throw notFound(`workflow ${report.tenant}/${report.workflow} not found`);
      case 'not_a_fire_time':
        throw badRequest(
          `body.tick: ${report.tick!.toISOString()} is not a fire time of this workflow's schedule${result.previous ? ` (the one before it is ${result.previous.toISOString()})` : ''}`,
        );
      case 'future_tick':
        throw badRequest(`body.tick: ${report.tick!.toISOString()} has not come yet`);
      case 'tick_taken':
        throw conflict('tick_taken', `tick ${report.tick!.toISOString()} already has run ${result.run.id} (${result.run.status})`, { run: runView(result.run) });
      case 'conflict':
        throw conflict('conflicting_report', `externalId ${JSON.stringify(report.externalId)} is run ${result.run.id}, already ${result.run.status}`, { run: runView(result.run) });
    }
  });

  router.post('/runs/:id', async (req, res) => {
    admitReport(deps, limiter(), res);
    const principal = principalOf(res);
    const runId = positiveId('run', req.params.id!);
    const body = parseInput(runFinishSchema, req.body);
    const visible = principal.kind === 'run' ? { runId: principal.runId } : scopeOf(principal);
    const result = await finishReportedRun(
      deps,
      runId,
      {
        status: body.status,
        error: reportedEndError(body.status, body.error, body.exitCode),
        stage: body.stage ?? null,
        rows: body.rows ?? null,
        exitCode: body.exitCode ?? null,
        logUrl: body.logUrl ?? null,
        logExcerpt: body.log ?? null,
      },
      visible,
    );
    switch (result.kind) {
      case 'finished':
        res.status(200).json(runView(result.run));
        return;
      case 'ended_late':
        res.status(200).json(endedLateView(result.run));
        return;
      case 'already_finished':
        if (result.same) {
          res.status(200).json({ ...runView(result.run), duplicate: true });
          return;
        }
        throw conflict('already_finished', `run ${runId} already finished as ${reportedStatusOf(result.run)}`, { run: runView(result.run) });
      case 'not_found':
        throw notFound(`run ${runId} not found`);
    }
  });

  return router;
}
