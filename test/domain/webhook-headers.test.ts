import { describe, expect, it } from 'vitest';
import { reservedHeaderReason, webhookRequestHeaders, withOwnHeaders } from '../../src/domain/webhook-headers.js';

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
});
