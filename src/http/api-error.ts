import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { databaseRefusalOf, isConnectionError } from '../db/connection-errors.js';
import { refusalRetryAfterSeconds, refusalText } from '../domain/database-refusal.js';
import type { Logger } from '../log.js';
import { describeIssues } from '../config/workflows-file.js';

/**
 * The one shape every API failure has:
 *   { "error": "<code>", "message": "<what went wrong, naming the field and value>", "issues"?: [...] }
 * Services throw these (or return unions the routes map to them); the handler
 * below turns them, and body-parser's own failures, into JSON responses.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new ApiError(400, 'invalid_request', message, extra);
export const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const conflict = (code: string, message: string, extra?: Record<string, unknown>) => new ApiError(409, code, message, extra);

/** Parses with zod; a failure is a 400 whose lines name each field and the value it got. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, source = 'body'): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error.issues, input, source);
}

/** The same 400 for problems found after parsing (a secret's environment variable unset), values of secret fields hidden. */
export function invalidInput(zodIssues: readonly z.core.$ZodIssue[], input: unknown, source = 'body'): ApiError {
  const issues = describeIssues(source, undefined, input, zodIssues);
  return badRequest(issues.join('; '), { issues });
}

/**
 * An answer given before the request's body was read (a 401 before the
 * token, a 404, a 405, a 413): the connection closes after it, so the rest of
 * the body is never read, not even to be drained (Node would read it all, to
 * the request timeout, to keep the connection alive).
 */
export function closeIfBodyUnread(req: Request, res: Response): void {
  if (!req.complete) res.set('connection', 'close');
}

/** The 413 of a body parser's limit (`entity.too.large`), as JSON like every refusal; the connection closes after it. */
export function bodyTooLarge(req: Request, res: Response, limit: number | undefined): void {
  closeIfBodyUnread(req, res);
  res.status(413).json({ error: 'body_too_large', message: `request body is larger than ${limit} bytes` });
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/** What a refusal for a database outage asks the client to wait: the engine's loops are back within a few seconds of it. */
const RETRY_AFTER_SECONDS = 2;

export function apiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    closeIfBodyUnread(req, res);
    if (error instanceof ApiError) {
      res.status(error.status).json({ error: error.code, message: error.message, ...error.extra });
      return;
    }
    // Express's own parameter decoding: a malformed path is the caller's, not ours.
    if (error instanceof URIError) {
      res.status(400).json({ error: 'invalid_request', message: `path: ${error.message}` });
      return;
    }
    const parser = error as BodyParserError;
    switch (parser.type) {
      case 'entity.too.large':
        bodyTooLarge(req, res, parser.limit);
        return;
      case 'entity.parse.failed':
        res.status(400).json({ error: 'invalid_json', message: jsonBodyProblem(error as Error & { body?: unknown }) });
        return;
      case 'encoding.unsupported':
      case 'charset.unsupported':
        res.status(415).json({ error: 'unsupported_encoding', message: (error as Error).message });
        return;
      case 'request.aborted':
        return;
    }
    // A compressed body that does not inflate (`Content-Encoding: gzip` over plain bytes): the decompressor's error,
    // which the parser marks 400 (exposable) but gives no type. The caller's, like invalid JSON, never a 500.
    if (parser.status === 400 && (error as { expose?: unknown }).expose === true) {
      const encoding = req.get('content-encoding');
      res.status(400).json({ error: 'invalid_request', message: `body: ${encoding ? `not valid ${encoding.slice(0, 40)} data` : 'could not be read'} (${(error as Error).message})` });
      return;
    }
    // The route pattern, never the path: a ping's path is its key.
    const route = `${req.baseUrl}${(req.route as { path?: string } | undefined)?.path ?? ''}`;
    if (isConnectionError(error)) {
      // The database away for a moment (a terminated connection, a restart) is nobody's bug: the client sends again
      // shortly. One line without a stack: under a retry storm, formatting stacks was a large share of the CPU (issue 19).
      logger.warn({ error: (error as Error).message, method: req.method, route }, 'API request refused: database unavailable');
      res.status(503).set('Retry-After', String(RETRY_AFTER_SECONDS)).json({ error: 'database_unavailable', message: 'the database is not answering; send the request again shortly' });
      return;
    }
    const refusal = databaseRefusalOf(error);
    if (refusal) {
      // The database answered but refuses (read-only, disk full, a lock held elsewhere): it passes, like an outage.
      // Nothing was written: the request's one transaction rolled back.
      logger.warn({ error: (error as Error).message, refusal, method: req.method, route }, `API request refused: ${refusalText(refusal)}`);
      res
        .status(503)
        .set('Retry-After', String(refusalRetryAfterSeconds(refusal)))
        .json({ error: 'database_unavailable', reason: refusal, message: `${refusalText(refusal)}; send the request again shortly` });
      return;
    }
    logger.error({ err: error, method: req.method, route }, 'API request failed');
    res.status(500).json({ error: 'internal', message: 'internal error; the server log has the details' });
  };
}

/**
 * The parser's strict mode refuses a body that is JSON but not an object or a
 * list (`null`, `5`, `"x"`) with a made-up syntax error ("Unexpected token
 * 'n', "null" is not valid JSON"), which sends the caller looking for a typo.
 */
function jsonBodyProblem(error: Error & { body?: unknown }): string {
  if (typeof error.body === 'string') {
    try {
      const value: unknown = JSON.parse(error.body);
      return `request body must be a JSON object (got ${JSON.stringify(value)?.slice(0, 40) ?? 'nothing'})`;
    } catch {
      // Not JSON at all: the parser's own words.
    }
  }
  return `request body is not valid JSON: ${error.message}`;
}

/** What no router answered: JSON like every API answer, never Express's HTML page (which echoes the path). */
export const unmatchedRoute: RequestHandler = (req, res) => {
  closeIfBodyUnread(req, res);
  res.status(404).json({ error: 'not_found', message: `no endpoint ${req.method} at this path; the API is under /api/v1` });
};
