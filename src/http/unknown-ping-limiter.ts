import { clientKey } from '../domain/address-policy.js';
import { giveBack, peek, refill, take, type Bucket, type BucketPolicy } from '../domain/token-bucket.js';

/** Addresses remembered at most; the least recently seen goes first (a scan from many addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;
/** Keys remembered per address as proven (a proxy in front of many jobs); the oldest goes first. */
const MAX_KEYS_PER_ADDRESS = 1_000;

interface Client {
  bucket: Bucket;
  /** Keys this address has pinged with successfully: it knows them, so answering them tells it nothing. */
  proven: Set<string>;
}

export type Admission = { ok: true; reserved: boolean } | { ok: false; retryAfterSeconds: number };

/**
 * Guesses at ping keys per client address, in this replica's memory (each
 * replica limits on its own: N replicas let N times through, which the
 * 128-bit keys make harmless; docs/security.md). An IPv6 client is counted by
 * its /64 (`clientKey`), not by each address.
 *
 * A key the address has not yet pinged with successfully takes a token
 * before it is looked up (`admit`), so a burst sent at once cannot pass the
 * check before the first of it is charged; the token comes back when the key
 * turns out valid (`proven`). Over the allowance such a key is refused
 * without a lookup, valid or not: were a valid one answered there, `200`
 * against `429` would tell a guesser which guess was right at any speed.
 * A key the address has already used is answered whatever its allowance, so
 * a neighbour's guessing never slows a job that has pinged before.
 */
export class UnknownPingLimiter {
  private readonly clients = new Map<string, Client>();
  private readonly policy: BucketPolicy;

  constructor(perMinute: number) {
    this.policy = { capacity: perMinute, periodMs: 60_000 };
  }

  /** Before looking `key` up: may it be looked up for this address, and did that take a token? */
  admit(address: string, key: string, now: number): Admission {
    const client = this.touch(address, now);
    if (client.proven.has(key)) return { ok: true, reserved: false };
    const verdict = peek(client.bucket, this.policy);
    if (!verdict.ok) return verdict;
    client.bucket = take(client.bucket);
    return { ok: true, reserved: true };
  }

  /** The key was valid: its token (if it took one) comes back, and the address is known to hold it. */
  proven(address: string, key: string, admission: Admission, now: number): void {
    const client = this.touch(address, now);
    if (admission.ok && admission.reserved) client.bucket = giveBack(client.bucket, this.policy);
    client.proven.delete(key);
    client.proven.add(key);
    if (client.proven.size > MAX_KEYS_PER_ADDRESS) client.proven.delete(client.proven.values().next().value!);
  }

  /** The key is no longer valid (its workflow disabled, its key changed): it goes through the allowance again. */
  forget(address: string, key: string): void {
    this.clients.get(clientKey(address))?.proven.delete(key);
  }

  /** The address's state, refilled to `now` and made the most recently seen. */
  private touch(address: string, now: number): Client {
    const id = clientKey(address);
    const client = this.clients.get(id) ?? { bucket: refill(undefined, now, this.policy), proven: new Set<string>() };
    client.bucket = refill(client.bucket, now, this.policy);
    this.clients.delete(id);
    this.clients.set(id, client);
    if (this.clients.size > MAX_ADDRESSES) this.clients.delete(this.clients.keys().next().value!);
    return client;
  }
}
