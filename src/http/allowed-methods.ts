import { Router, type RequestHandler, type Response } from 'express';
import { ApiError } from './api-error.js';

/** What `Router#listRoutes()` (the `router` package Express 5 is built on) lists for each route. */
interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
  router?: unknown;
}

const ALLOWED = 'allowedMethods';

/**
 * The methods each path of the API takes, answered before any endpoint runs:
 * OPTIONS is a JSON 200 `{path, methods}` with `Allow`, and a method the path
 * does not take is a JSON 405 with `Allow` (before its body is read). Needed
 * because the endpoints live in several routers: Express's automatic OPTIONS
 * comes from the first of them with a matching route and lists only that
 * router's methods (`OPTIONS /runs` said `POST` although the read API answers
 * `GET /runs`), as text/plain; and a wrong method fell through to the 404.
 * The table is built from the routers themselves, so it cannot drift from
 * them; a path no route matches passes on untouched (to the JSON 404).
 */
export function methodTable(routers: readonly Router[]): Router {
  const byPath = new Map<string | RegExp, Set<string>>();
  for (const router of routers) {
    const list = (router as Router & { listRoutes?: () => ListedRoute[] }).listRoutes;
    if (typeof list !== 'function') throw new Error('express Router#listRoutes is missing: the method table (src/http/allowed-methods.ts) needs router >= 2.3');
    for (const route of list.call(router)) {
      // A router mounted inside an endpoint router, or an `all` route, would need more than this flat table knows.
      if (!route.methods || route.methods.includes('*')) throw new Error(`method table: ${String(route.path)} is not a plain route`);
      const methods = byPath.get(route.path) ?? new Set<string>();
      route.methods.forEach((m) => methods.add(m));
      byPath.set(route.path, methods);
    }
  }
  const table = Router();
  for (const [path, methods] of byPath) {
    // Every pattern that matches adds its methods (two patterns may match one path), then the check below answers.
    table.all(path, (_req, res, next) => {
      const seen = (res.locals[ALLOWED] as Set<string> | undefined) ?? new Set<string>();
      methods.forEach((m) => seen.add(m));
      res.locals[ALLOWED] = seen;
      next();
    });
  }
  table.use(answerMethods);
  return table;
}

/** Whether the method table matched the request's path to an endpoint's route (set on the way through it). */
export function isKnownPath(res: Response): boolean {
  return res.locals[ALLOWED] !== undefined;
}

const answerMethods: RequestHandler = (req, res, next) => {
  const seen = res.locals[ALLOWED] as Set<string> | undefined;
  if (!seen) return next();
  const methods = [...seen].sort();
  if (req.method === 'OPTIONS') {
    res.set('Allow', methods.join(', ')).json({ path: req.path, methods });
    return;
  }
  if (seen.has(req.method)) return next();
  res.set('Allow', methods.join(', '));
  throw new ApiError(405, 'method_not_allowed', `${req.method} is not a method of ${req.path}; it takes ${methods.join(', ')}`, { allow: methods });
};
