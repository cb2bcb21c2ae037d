/**
 * The only place that reads the wall clock. Everything else is handed a Clock,
 * which is what lets tests and the replay command move a night forward in
 * milliseconds with the real engine.
 */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` of this clock's time, or early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** This is the machine's wall clock: comparing it with the database's says how far off it is (src/domain/clock-offset.ts). */
  readonly wall?: boolean;
}

export const systemClock: Clock = {
  wall: true,
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * A clock that only moves when told to. Sleepers wake when `advance`/`set`
 * passes their deadline, in deadline order.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start: Date | string) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(to: Date | string): void {
    const target = new Date(to).getTime();
    if (target < this.current) throw new Error(`ManualClock cannot go back from ${this.now().toISOString()} to ${new Date(target).toISOString()}`);
    this.current = target;
    this.wake();
  }

  advance(ms: number): void {
    this.set(new Date(this.current + ms));
  }

  /** The earliest deadline anyone is sleeping until, if any. */
  nextWake(): Date | undefined {
    if (this.sleepers.length === 0) return undefined;
    return new Date(Math.min(...this.sleepers.map((s) => s.until)));
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted || ms <= 0) return resolve();
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        resolve();
      };
      // The listener goes when the sleep ends, as the system clock's does: a long replay sleeps on one signal thousands of times.
      const sleeper = {
        until: this.current + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wake(): void {
    const due = this.sleepers.filter((s) => s.until <= this.current).sort((a, b) => a.until - b.until);
    this.sleepers = this.sleepers.filter((s) => s.until > this.current);
    for (const s of due) s.resolve();
  }
}
