import { clientKey } from '../domain/address-policy.js';
import { peek, refill, take, type Bucket, type BucketPolicy } from '../domain/token-bucket.js';

/** Addresses remembered at most; the least recently seen goes first (a scan from many addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;

/**
 * Unknown ping keys per client address, in this replica's memory (each
 * replica limits on its own: N replicas let N times through, which the
 * 128-bit keys make harmless; docs/security.md). Only unknown keys take a
 * token, and a valid key is answered even from an address that is over its
 * limit, so a job's pings are never slowed by a neighbour's guessing.
 * An IPv6 client is counted by its /64 (`clientKey`), not by each address.
 */
export class UnknownPingLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly policy: BucketPolicy;

  constructor(perMinute: number) {
    this.policy = { capacity: perMinute, periodMs: 60_000 };
  }

  /** Before looking a key up: may this address have an unknown key answered now? */
  check(address: string, now: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    return peek(refill(this.buckets.get(clientKey(address)), now, this.policy), this.policy);
  }

  /** After a key turned out unknown. */
  charge(address: string, now: number): void {
    const key = clientKey(address);
    const bucket = take(refill(this.buckets.get(key), now, this.policy));
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > MAX_ADDRESSES) this.buckets.delete(this.buckets.keys().next().value!);
  }
}
