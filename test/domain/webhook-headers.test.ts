import { describe, expect, it } from 'vitest';
import { headerProblem, launcherRequestHeaders, reservedHeaderReason, webhookRequestHeaders, withOwnHeaders } from '../../src/domain/webhook-headers.js';

describe('webhook headers: the bot’s own win, in any case', () => {
  it.each(['content-type', 'Content-Type', 'IDEMPOTENCY-KEY', 'idempotency-key', 'x-scheduler-signature', 'X-Scheduler-Timestamp', 'x-scheduler-event', 'X-Scheduler-Anything', 'User-Agent', 'Host', 'content-length'])(
    '%s is reserved',
    (name) => {
      expect(reservedHeaderReason(name)).toContain(`"${name}" is set by the bot itself`);
    },
  );

  it.each(['X-Team', 'Authorization', 'X-Api-Key', 'X-Scheduler'])('%s may be configured', (name) => {
    expect(reservedHeaderReason(name)).toBeUndefined();
  });

  it('a stored header differing only in case from the bot’s is left out, not combined; others are kept', () => {
    const own = { 'Idempotency-Key': 'k1', 'X-Scheduler-Signature': 'v1=abc', 'Content-Type': 'application/json' };
    const merged = webhookRequestHeaders({ 'idempotency-key': 'evil', 'x-scheduler-signature': 'v1=forged', 'content-type': 'text/plain', 'X-Scheduler-Extra': 'x', 'X-Team': 'data' }, own);
    expect(merged).toEqual({ 'X-Team': 'data', ...own });
    expect(webhookRequestHeaders(undefined, own)).toEqual(own);
    // The HTTP layer's own (Content-Type, User-Agent) beat a caller's in any case; the caller's others pass.
    expect(withOwnHeaders({ 'content-type': 'text/plain', 'Idempotency-Key': 'k1' }, { 'Content-Type': 'application/json' })).toEqual({ 'Idempotency-Key': 'k1', 'Content-Type': 'application/json' });
  });

  it.each([
    ['X-Team', 'a\r\nX-Injected: 1', 'webhook', /line breaks or control characters/],
    ['X-Team', 'caf\u00e9 \u2603', 'launcher', /line breaks or control characters/],
    ['X Team', 'a', 'launcher', /not a valid HTTP header name/],
    ['X-Team:', 'a', 'webhook', /not a valid HTTP header name/],
    ['Host', 'internal', 'launcher', /set by the bot itself/],
    ['Expect', '100-continue', 'webhook', /set by the bot itself/],
    ['X-Scheduler-Signature', 'v1=x', 'launcher', /set by the bot itself/],
  ] as const)('%s: %j cannot be sent by a %s', (name, value, use, reason) => {
    expect(headerProblem(name, value, use)).toMatch(reason);
  });

  it('a launcher may set User-Agent and Idempotency-Key (a webhook may not); a stored launcher header the bot sets is left out', () => {
    expect(headerProblem('User-Agent', 'ci', 'launcher')).toBeUndefined();
    expect(headerProblem('Idempotency-Key', 'k', 'launcher')).toBeUndefined();
    expect(headerProblem('Authorization', 'Bearer x', 'launcher')).toBeUndefined();
    expect(launcherRequestHeaders({ Host: 'internal', 'X-Team': 'data', 'X-Bad': 'a\nb' }, { 'content-type': 'application/json' })).toEqual({ 'X-Team': 'data', 'content-type': 'application/json' });
  });
});
