import type { RequestHandler } from 'express';
import { badRequest } from './api-error.js';

/**
 * A path that cannot be decoded (`%ZZ`) or decodes to a NUL would reach
 * Express's parameter decoding (a URIError) or PostgreSQL (which cannot
 * store NUL) as a 500. Refused here, first, with a reason.
 */
export const checkPath: RequestHandler = (req, _res, next) => {
  let decoded: string;
  try {
    decoded = decodeURIComponent(req.path);
  } catch {
    throw badRequest(`path: bad percent-encoding in ${JSON.stringify(req.path.slice(0, 200))}`);
  }
  if (decoded.includes('\u0000')) throw badRequest('path: NUL characters (%00) are not allowed');
  next();
};

/** Output text a run reports: NULs there are replaced when stored (storableOutcome), not refused. */
const OUTPUT_FIELDS = new Set(['error', 'log', 'stage']);

function findNul(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (depth > 20 || value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k.includes('\u0000')) return `${path}.${k.replace(/\u0000/g, '\\u0000')}`;
    if (depth === 0 && OUTPUT_FIELDS.has(k)) continue;
    const found = findNul(v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** NUL in a JSON string that names or configures something (ids, names, commands, URLs): 400 naming the field. */
export const checkJsonStrings: RequestHandler = (req, _res, next) => {
  const at = findNul(req.body, 'body');
  if (at) throw badRequest(`${at}: NUL characters (\\u0000) are not allowed`);
  next();
};
