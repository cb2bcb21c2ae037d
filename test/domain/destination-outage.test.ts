import { describe, expect, it } from 'vitest';
import { outageEndNotice, type Outage } from '../../src/domain/destination-outage.js';

const T = new Date('2026-03-10T02:00:00.000Z');
const outage = (noticedAt: Date | null): Outage => ({ failingSince: T, failures: 7, heldUntil: T, lastError: 'HTTP 500', noticedAt });

describe('outageEndNotice: how an outage ends, and what the platform hears', () => {
  it('a noticed outage ends "recovered" on a delivery, "refused" on a permanent answer (never "recovered")', () => {
    expect(outageEndNotice(outage(T), 'delivered')).toBe('recovered');
    expect(outageEndNotice(outage(T), 'refused')).toBe('refused');
  });

  it('an outage nobody was told of ends quietly; no outage, nothing to end', () => {
    expect(outageEndNotice(outage(null), 'delivered')).toBeUndefined();
    expect(outageEndNotice(outage(null), 'refused')).toBeUndefined();
    expect(outageEndNotice(undefined, 'refused')).toBeUndefined();
  });
});
