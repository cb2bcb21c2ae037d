/**
 * Per pacing key: when the next delivery may start. In process memory on
 * purpose: it is an optimisation over Slack's own limit, and a 429 that gets
 * through (a second replica, a restart) is handled by waiting Retry-After.
 */
export class Pacer {
  private readonly notBefore = new Map<string, number>();
  private readonly destinations = new Map<string, Set<string>>();

  /** Takes the slot for `key` if it is free at `now`; false when it must wait. */
  take(key: string, destination: string, now: Date, minIntervalMs: number): boolean {
    this.remember(key, destination);
    const t = now.getTime();
    if ((this.notBefore.get(key) ?? 0) > t) return false;
    this.notBefore.set(key, t + minIntervalMs);
    return true;
  }

  /** A rate limit: nothing for `key` until `until`. */
  hold(key: string, destination: string, until: Date): void {
    this.remember(key, destination);
    this.notBefore.set(key, Math.max(this.notBefore.get(key) ?? 0, until.getTime()));
  }

  readyAt(key: string): Date | undefined {
    const t = this.notBefore.get(key);
    return t === undefined ? undefined : new Date(t);
  }

  /** Destinations whose key is not free at `now` (for the claim to skip). */
  blockedDestinations(now: Date): string[] {
    const out: string[] = [];
    for (const [key, t] of this.notBefore) if (t > now.getTime()) out.push(...(this.destinations.get(key) ?? []));
    return out;
  }

  private remember(key: string, destination: string): void {
    let set = this.destinations.get(key);
    if (!set) this.destinations.set(key, (set = new Set()));
    set.add(destination);
  }
}
