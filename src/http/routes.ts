import { Router } from 'express';
import type { Deps } from '../deps.js';

/** The ingest API, pings and metrics. Issue 4 fills this. */
export function apiRoutes(_deps: Deps): Router {
  return Router();
}
