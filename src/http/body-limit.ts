import type { Request, RequestHandler, Response } from 'express';
import { bodyTooLarge } from './api-error.js';

interface ParserError {
  type?: string;
}

/**
 * A body parser (express.json, express.raw) held to `limit` bytes as they
 * arrive. The parsers answer their own 413 only after reading the body to its
 * end ("dump"), however long: a chunked body, which has no Content-Length to
 * refuse up front, was read until the request timeout. Here the request is
 * answered 413 at the first byte past the limit, and the connection closes
 * after the answer (the rest is never read). A Content-Length over the limit
 * is refused before a byte is read. `tooLarge` answers the 413; by default
 * the API's JSON refusal.
 */
export function boundedBody(
  parser: RequestHandler,
  limit: number,
  tooLarge: (req: Request, res: Response) => void = (req, res) => bodyTooLarge(req, res, limit),
): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return tooLarge(req, res);
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return;
      req.off('data', count);
      if (!res.headersSent) tooLarge(req, res);
    };
    // Listening before the parser does, in the same tick: both hear every chunk (the stream starts flowing on the next tick).
    req.on('data', count);
    parser(req, res, (error?: unknown) => {
      req.off('data', count);
      // Answered already (413 above): what the parser says after reading on is moot.
      if (res.headersSent) return;
      if ((error as ParserError | undefined)?.type === 'entity.too.large') return tooLarge(req, res);
      next(error);
    });
  };
}
