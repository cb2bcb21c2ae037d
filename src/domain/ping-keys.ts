/**
 * A fixed ping key the workflows file gives a workflow (`pingKey`) that
 * another workflow holds now. Ping keys are unique, and a key is the only
 * credential a ping carries, so the rule is who keeps it:
 * - a workflow of the file (renamed, moved to another tenant, gone from the
 *   file, or still in it without a `pingKey` of its own) gives it up: the
 *   file is the operator's word, and the job pinging with the key is the one
 *   the file now names. The holder gets a fresh key; its history stays.
 * - a workflow managed over the API that is disabled (deleted), or whose
 *   tenant is gone, gives it up too: no ping reaches it any more.
 * - an enabled workflow managed over the API keeps it: its job may be
 *   pinging with it now. The file is refused, naming the field.
 */

export interface PingKeyHolder {
  tenantId: string;
  name: string;
  source: 'file' | 'api';
  /** The workflow and its tenant both enabled: its pings are taken now. */
  enabled: boolean;
}

export type PingKeyClaim = { kind: 'moves' } | { kind: 'refused'; reason: string };

export function fileClaimsPingKey(holder: PingKeyHolder): PingKeyClaim {
  if (holder.source === 'file' || !holder.enabled) return { kind: 'moves' };
  return {
    kind: 'refused',
    reason: `is already the ping key of workflow "${holder.tenantId}/${holder.name}", managed over the API; give one of them another key, or delete that one (DELETE /api/v1/workflows/${holder.tenantId}/${holder.name})`,
  };
}

/** The shortest fixed ping key (128 bits, 22 base64url characters, like a generated one), and the characters one may hold. */
export const PING_KEY_MIN_LENGTH = 22;
const PING_KEY_SHAPE = new RegExp(`^[A-Za-z0-9_-]{${PING_KEY_MIN_LENGTH},128}$`);

/**
 * A ping key as a problem of the file (or of a body) may repeat it. One that
 * has a key's shape may work, now or once the problem is fixed (given to two
 * entries, held by an API workflow whose job pings with it): it is the only
 * credential a ping carries, hidden like any secret. One refused for its
 * shape is no key, and is shown so the operator sees what is wrong with it.
 */
export function shownPingKey(value: unknown): unknown {
  return typeof value === 'string' && PING_KEY_SHAPE.test(value) ? '(hidden)' : value;
}

/**
 * A request path as a log line may show it: a ping URL's key is its only
 * credential (`/ping/<key>/fail` → `/ping/(hidden)/fail`); every other path
 * of the bot carries no secret. The query string is never shown (a `rid`
 * is the job's own).
 */
export function loggablePath(path: string): string {
  return path.replace(/^\/ping\/[^/?#]*/, '/ping/(hidden)').replace(/[?#].*$/, '').slice(0, 300);
}
