import { Router, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { EVENT_PAGE_MAX } from '../services/alert-read.js';
import { isKnownPath } from './allowed-methods.js';
import { badRequest, parseInput } from './api-error.js';

/**
 * The query parameters of the API, all in one place: the routes below take
 * these and nothing else; every other route under /api/v1 takes none. A
 * parameter a route does not take is a 400 naming it (a typo such as
 * `?stauts=failed` silently answered with every run was a wrong answer, not
 * a filter), and so is one given twice (`?limit=1&limit=2`: which one?).
 * The routes read the parsed values with `queryOf`.
 */

/**
 * A whole number in decimal digits. `z.coerce.number()` took anything
 * Number() reads: `0x10` (16), `1e1`, `0b11`, ` 5 `, `5.0`: a client's bug
 * answered as if it meant something.
 */
export const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,15}$/, `must be a whole number written in decimal digits, ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `must be ${min} to ${max}`).max(max, `must be ${min} to ${max}`));

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

/** What every list pages by: a time range, the previous page's `next`, and a page size. */
const listPage = { from: instant.optional(), to: instant.optional(), cursor: cursor.optional(), limit: wholeNumber(1, 200).default(50) };

export const runListQuery = z
  .object({
    tenant: z.string().min(1).max(63).optional(),
    workflow: z.string().min(1).max(100).optional(),
    status: z.enum(['running', 'pending_retry', 'succeeded', 'failed', 'missed', 'skipped']).optional(),
    trigger: z.enum(['schedule', 'manual', 'retry', 'external']).optional(),
    ...listPage,
  })
  .strict();

export const alertListQuery = z
  .object({
    status: z.enum(['open', 'resolved']).optional(),
    ...listPage,
  })
  .strict();

/**
 * An alert's event timeline is read oldest first (a story), so its cursor
 * (`eventsNext`) continues after the page's last event; the same `cursor`
 * and `limit` as the lists, the first page as large as a page may be.
 */
export const alertEventsQuery = z
  .object({
    cursor: cursor.optional(),
    limit: wholeNumber(1, EVENT_PAGE_MAX).default(EVENT_PAGE_MAX),
  })
  .strict();

/** Every route that takes query parameters (GET also answers HEAD); docs/api.md is checked against it (test/docs/reference.test.ts). */
export const QUERY_ROUTES: readonly { path: string; schema: z.ZodObject }[] = [
  { path: '/runs', schema: runListQuery },
  { path: '/alerts', schema: alertListQuery },
  { path: '/alerts/:id', schema: alertEventsQuery },
];

const PARSED = 'parsedQuery';

/** A parameter given more than once, named with what it got. */
function repeated(query: Record<string, unknown>): string | undefined {
  const [name, value] = Object.entries(query).find(([, v]) => Array.isArray(v)) ?? [];
  return name === undefined ? undefined : `query: ${name}: give it once (got ${JSON.stringify(value).slice(0, 120)})`;
}

/**
 * Mounted once, after the method table (a path no endpoint answers stays a
 * 404, a wrong method a 405) and before any body is read.
 */
export function queryParameters(): Router {
  const router = Router();
  for (const { path, schema } of QUERY_ROUTES) {
    router.get(path, (req, res, next) => {
      const query = req.query as Record<string, unknown>;
      const known = Object.keys(schema.shape);
      refuseUnknown(req.method, req.path, Object.keys(query), known);
      const twice = repeated(query);
      if (twice) throw badRequest(twice);
      res.locals[PARSED] = parseInput(schema, query, 'query');
      next('router');
    });
  }
  router.use(takesNone);
  return router;
}

/** The one wording of an unknown parameter, on every route: its name, and what the route takes. */
function refuseUnknown(method: string, path: string, names: readonly string[], known: readonly string[]): void {
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length === 0) return;
  const takes = known.length ? `takes only ${known.join(', ')}` : 'takes no query parameters';
  throw badRequest(`query: unknown parameter ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')}: ${method} ${path.slice(0, 200)} ${takes}`);
}

const takesNone: RequestHandler = (req, res, next) => {
  if (isKnownPath(res)) refuseUnknown(req.method, req.path, Object.keys(req.query as Record<string, unknown>), []);
  next();
};

/** The query a route's entry in QUERY_ROUTES parsed, typed by that schema. */
export function queryOf<S extends z.ZodType>(res: Response, _schema: S): z.output<S> {
  if (!(PARSED in res.locals)) throw new Error('route reads a query without an entry in QUERY_ROUTES (src/http/query-parameters.ts)');
  return res.locals[PARSED] as z.output<S>;
}
