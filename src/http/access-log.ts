import type { RequestHandler } from 'express';
import type { Clock } from '../clock.js';
import { loggablePath } from '../domain/ping-keys.js';
import type { Logger } from '../log.js';

/**
 * One `debug` line per HTTP request answered (method, path with any ping key
 * hidden, status, milliseconds), for an operator asking "did my job's ping
 * arrive, and what did it get?" with `LOG_LEVEL=debug`. Off at the default
 * `info`: a ping every minute from every job is not news.
 */
export function accessLog(logger: Logger, clock: Pick<Clock, 'now'>): RequestHandler {
  return (req, res, next) => {
    if (!logger.isLevelEnabled('debug')) return next();
    const started = clock.now().getTime();
    res.once('finish', () => {
      logger.debug({ method: req.method, path: loggablePath(req.originalUrl), status: res.statusCode, ms: clock.now().getTime() - started }, 'http request');
    });
    next();
  };
}
