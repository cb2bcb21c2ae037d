import { peek, refill, take, type Bucket, type BucketPolicy } from '../domain/token-bucket.js';

/** Addresses remembered at most; the least recently seen goes first (a scan from many addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;

/**
 * Unknown ping keys per client address, in this replica's memory (each
 * replica limits on its own: N replicas let N times through, which the
 * 128-bit keys make harmless; docs/security.md). Only unknown keys take a
 * token, and a valid key is answered even from an address that is over its
 * limit, so a job's pings are never slowed by a neighbour's guessing.
 */
export class UnknownPingLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly policy: BucketPolicy;

  constructor(perMinute: number) {
    this.policy = { capacity: perMinute, periodMs: 60_000 };
  }

  /** Before looking a key up: may this address have an unknown key answered now? */
  check(address: string, now: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    return peek(refill(this.buckets.get(address), now, this.policy), this.policy);
  }

  /** After a key turned out unknown. */
  charge(address: string, now: number): void {
    const bucket = take(refill(this.buckets.get(address), now, this.policy));
    this.buckets.delete(address);
    this.buckets.set(address, bucket);
    if (this.buckets.size > MAX_ADDRESSES) this.buckets.delete(this.buckets.keys().next().value!);
  }
}
