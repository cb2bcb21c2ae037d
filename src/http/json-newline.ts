import type { RequestHandler } from 'express';

/**
 * Every JSON answer of this server ends with a newline, so `curl` leaves the
 * prompt on a line of its own. One place, ahead of every route, Slack's and
 * the error handlers' included: each answers through `res.json`. A newline
 * after the value is whitespace JSON allows (RFC 8259 §2), so every parser
 * reads the same value. This replaces Express's `res.json` for the request:
 * the app sets none of the `json replacer`, `json spaces` or `json escape`
 * settings it would read; `Content-Length` is counted by `res.send`, newline
 * included.
 */
export const jsonEndsWithNewline: RequestHandler = (_req, res, next) => {
  res.json = function json(body: unknown) {
    const text = JSON.stringify(body) as string | undefined;
    if (!this.get('Content-Type')) this.set('Content-Type', 'application/json');
    return this.send(text === undefined ? text : `${text}\n`);
  };
  next();
};
