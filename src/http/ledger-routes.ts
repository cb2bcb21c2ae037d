import { Router } from 'express';
import type { Deps } from '../deps.js';
import { getAlertDetail, listAlerts } from '../services/alert-read.js';
import { getRunDetail, listRuns } from '../ledger/run-queries.js';
import { badRequest, notFound } from './api-error.js';
import { positiveId } from './input-guards.js';
import { alertEventsQuery, alertListQuery, queryOf, runListQuery } from './query-parameters.js';
import { principalOf, scopeOf } from './auth.js';

/** GET /api/v1/runs and /runs/:id, GET /api/v1/alerts and /alerts/:id: filters, newest first, cursor pagination. */
export function ledgerRoutes(deps: Deps): Router {
  const router = Router();

  router.get('/runs', async (req, res) => {
    const q = queryOf(res, runListQuery);
    beforeTo(q);
    const scope = scopeOf(principalOf(res));
    // A tenant asking for another tenant's runs sees none, as if it did not exist.
    if (scope.tenantId && q.tenant && q.tenant !== scope.tenantId) return res.json({ runs: [], next: null });
    const page = await listRuns(deps.db, q.tenant ? { tenantId: q.tenant } : scope, {
      ...(q.workflow ? { workflow: q.workflow } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...(q.trigger ? { trigger: q.trigger } : {}),
      ...(q.from ? { from: q.from } : {}),
      ...(q.to ? { to: q.to } : {}),
      ...(q.cursor !== undefined ? { before: q.cursor } : {}),
      limit: q.limit,
    });
    res.json({ runs: page.runs, next: page.next === null ? null : String(page.next) });
  });

  router.get('/runs/:id', async (req, res) => {
    const id = positiveId('run', req.params.id);
    const run = await getRunDetail(deps.db, scopeOf(principalOf(res)), id);
    if (!run) throw notFound(`no run ${id}`);
    res.json(run);
  });

  router.get('/alerts', async (req, res) => {
    const q = queryOf(res, alertListQuery);
    beforeTo(q);
    const page = await listAlerts(deps.db, scopeOf(principalOf(res)), {
      ...(q.status ? { status: q.status } : {}),
      ...(q.from ? { from: q.from } : {}),
      ...(q.to ? { to: q.to } : {}),
      ...(q.cursor !== undefined ? { before: q.cursor } : {}),
      limit: q.limit,
    });
    res.json({ alerts: page.alerts, next: page.next === null ? null : String(page.next) });
  });

  router.get('/alerts/:id', async (req, res) => {
    const id = positiveId('alert', req.params.id);
    const q = queryOf(res, alertEventsQuery);
    const alert = await getAlertDetail(deps.db, scopeOf(principalOf(res)), id, deps.config, { ...(q.cursor !== undefined ? { after: q.cursor } : {}), limit: q.limit });
    if (!alert) throw notFound(`no alert ${id}`);
    res.json(alert);
  });

  return router;
}

/** A time range must not be empty: named with both values. */
function beforeTo(q: { from?: Date; to?: Date }): void {
  if (q.from && q.to && q.from >= q.to) throw badRequest(`query: from: must be before to (got from ${q.from.toISOString()}, to ${q.to.toISOString()})`);
}
