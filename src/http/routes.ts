import express, { Router } from 'express';
import type { Deps } from '../deps.js';
import { apiErrorHandler, notFound } from './api-error.js';
import { boundedBody } from './body-limit.js';
import { methodTable } from './allowed-methods.js';
import { requireAuth } from './auth.js';
import type { LoopStatus } from '../engine/runner.js';
import { maintenanceRoutes } from './maintenance-routes.js';
import { checkJsonStrings, checkPath, checkQueryStrings, keepJsonText } from './input-guards.js';
import { queryParameters } from './query-parameters.js';
import { createMetrics, metricsHandler } from './metrics-route.js';
import { ledgerRoutes } from './ledger-routes.js';
import { pingRoutes } from './ping-routes.js';
import { runsRoutes } from './runs-routes.js';
import { TenantReportLimiter } from './tenant-report-limiter.js';
import { tenantsRoutes } from './tenants-routes.js';
import { workflowsRoutes } from './workflows-routes.js';

/** Largest JSON body the API reads (a run report with a 100 KB log fits). */
export const API_BODY_LIMIT = '256kb';
const API_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * The ingest API, pings and metrics. Body parsers are mounted under these
 * paths only: the Slack receiver on the same server needs the raw body of
 * its own requests to check their signatures.
 */
export function apiRoutes(deps: Deps, loops: () => LoopStatus[] = () => []): Router {
  const router = Router();

  const api = Router();
  api.use(checkPath, checkQueryStrings);
  // Authenticate before reading a body: an unknown caller does not get to make the server parse 256 KB.
  api.use(requireAuth(deps));
  // One allowance per tenant for its API reports and its pings alike.
  const reports = new TenantReportLimiter(deps.config.TENANT_REPORTS_PER_MINUTE);
  const endpoints = [runsRoutes(deps, reports), ledgerRoutes(deps), workflowsRoutes(deps), tenantsRoutes(deps), maintenanceRoutes(deps)];
  // OPTIONS and a wrong method answered from all the endpoint routers at once (Express's own OPTIONS knows only the first).
  api.use(methodTable(endpoints));
  // Query parameters: the few routes that take them, from one table; every other route takes none (400 naming them).
  api.use(queryParameters());
  // Any content type: `curl -d '{…}'` sends form encoding by default, and its JSON should still be read.
  api.use(boundedBody(express.json({ limit: API_BODY_LIMIT, type: () => true, verify: keepJsonText }), API_BODY_LIMIT_BYTES), checkJsonStrings);
  api.use(...endpoints);
  api.use((req) => {
    throw notFound(`no endpoint ${req.method} ${req.originalUrl.split('?')[0]}`);
  });
  api.use(apiErrorHandler(deps.logger));
  router.use('/api/v1', api);

  const pings = Router();
  pings.use(checkPath, pingRoutes(deps, reports));
  pings.use(apiErrorHandler(deps.logger));
  router.use('/ping', pings);

  router.get('/metrics', metricsHandler(createMetrics(deps, loops), deps.config));
  return router;
}
