import { Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { EVENT_PAGE_MAX, getAlertDetail, listAlerts } from '../services/alert-read.js';
import { getRunDetail, listRuns } from '../ledger/run-queries.js';
import { badRequest, notFound, parseInput } from './api-error.js';
import { principalOf, scopeOf } from './auth.js';

const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

/**
 * A page's `next` is the id of its last row (src/ledger/cursor-page.ts): a
 * positive id, written without leading zeros. `0` used to pass the pattern
 * and then be dropped as falsy (the first page again, silently).
 */
const cursor = z
  .string()
  .regex(/^[1-9]\d{0,14}$/, 'must be the `next` of a previous page (a positive id)')
  .transform(Number);

const runListQuery = z
  .object({
    tenant: z.string().min(1).max(63).optional(),
    workflow: z.string().min(1).max(100).optional(),
    status: z.enum(['running', 'pending_retry', 'succeeded', 'failed', 'missed', 'skipped']).optional(),
    trigger: z.enum(['schedule', 'manual', 'retry', 'external']).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();

/** GET /api/v1/runs and /runs/:id, GET /api/v1/alerts and /alerts/:id: filters, newest first, cursor pagination. */
export function ledgerRoutes(deps: Deps): Router {
  const router = Router();

  router.get('/runs', async (req, res) => {
    const q = parseInput(runListQuery, req.query, 'query');
    if (q.from && q.to && q.from >= q.to) throw badRequest('`from` must be before `to`');
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
    const raw = req.params.id;
    if (!/^\d{1,15}$/.test(raw)) throw badRequest(`run id must be a positive integer (got ${JSON.stringify(raw)})`);
    const run = await getRunDetail(deps.db, scopeOf(principalOf(res)), Number(raw));
    if (!run) throw notFound(`no run ${raw}`);
    res.json(run);
  });

  router.get('/alerts', async (req, res) => {
    const q = parseInput(alertListQuery, req.query, 'query');
    if (q.from && q.to && q.from >= q.to) throw badRequest('`from` must be before `to`');
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
    const raw = req.params.id;
    if (!/^\d{1,15}$/.test(raw)) throw badRequest(`alert id must be a positive integer (got ${JSON.stringify(raw)})`);
    const q = parseInput(alertEventsQuery, req.query, 'query');
    const alert = await getAlertDetail(deps.db, scopeOf(principalOf(res)), Number(raw), deps.config, { ...(q.cursor !== undefined ? { after: q.cursor } : {}), limit: q.limit });
    if (!alert) throw notFound(`no alert ${raw}`);
    res.json(alert);
  });

  return router;
}

const alertListQuery = z
  .object({
    status: z.enum(['open', 'resolved']).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();

/**
 * An alert's event timeline is read oldest first (a story), so its cursor
 * (`eventsNext`) continues after the page's last event; the same `cursor`
 * and `limit` as the lists, the first page as large as a page may be.
 */
const alertEventsQuery = z
  .object({
    cursor: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(EVENT_PAGE_MAX).default(EVENT_PAGE_MAX),
  })
  .strict();
