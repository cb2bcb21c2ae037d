/**
 * A token bucket: `capacity` tokens, refilled at `capacity` per `periodMs`.
 * Pure: the state and `now` in, the new state and the verdict out.
 */
export interface Bucket {
  tokens: number;
  at: number;
}

export interface BucketPolicy {
  capacity: number;
  periodMs: number;
}

export function refill(bucket: Bucket | undefined, now: number, policy: BucketPolicy): Bucket {
  if (!bucket) return { tokens: policy.capacity, at: now };
  const gained = ((now - bucket.at) / policy.periodMs) * policy.capacity;
  return { tokens: Math.min(policy.capacity, bucket.tokens + Math.max(0, gained)), at: now };
}

/** Whether a token is left (without taking one), and if not, whole seconds until one is. */
export function peek(bucket: Bucket, policy: BucketPolicy): { ok: true } | { ok: false; retryAfterSeconds: number } {
  if (bucket.tokens >= 1) return { ok: true };
  const msPerToken = policy.periodMs / policy.capacity;
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((1 - bucket.tokens) * msPerToken) / 1000)) };
}

export function take(bucket: Bucket): Bucket {
  return { ...bucket, tokens: Math.max(0, bucket.tokens - 1) };
}

/** A token given back (a reservation that turned out not to be needed), never past `capacity`. */
export function giveBack(bucket: Bucket, policy: BucketPolicy): Bucket {
  return { ...bucket, tokens: Math.min(policy.capacity, bucket.tokens + 1) };
}
