/**
 * While the database is away every loop fails a tick every second or two,
 * and the wake-up connection fails to reconnect as often: a line for each
 * was some 20,000 lines an hour per replica, burying what else was said.
 * Metrics count every failure (scheduler_loop_errors_total and friends);
 * the log says that it started, that it goes on, and that it ended.
 */
export const REPEATED_FAILURE_LOG_MS = 60_000;

export interface StreakLine {
  /** Failures in a row so far, this one included. */
  failures: number;
  /** Failures since the previous line that were not logged. */
  unlogged?: number;
}

/**
 * The log of one streak of failures: the first is logged at once, and so is
 * one of another kind than the last logged (a bug after an outage); the
 * same kind again at most once per REPEATED_FAILURE_LOG_MS, saying how many
 * went unlogged; `succeeded` ends the streak and says how long it was.
 * Times are milliseconds of the caller's clock.
 */
export class FailureStreak {
  private failures = 0;
  private startedAt = 0;
  private lastLineAt = 0;
  private lastKind: string | undefined;
  private unlogged = 0;

  constructor(private readonly everyMs = REPEATED_FAILURE_LOG_MS) {}

  /** A failure of `kind` at `now`: the fields of its line, or undefined when it is not to be logged. */
  failed(now: number, kind: string): StreakLine | undefined {
    if (this.failures++ === 0) this.startedAt = now;
    if (this.failures > 1 && kind === this.lastKind && now - this.lastLineAt < this.everyMs) {
      this.unlogged++;
      return undefined;
    }
    const line: StreakLine = { failures: this.failures, ...(this.unlogged ? { unlogged: this.unlogged } : {}) };
    this.lastKind = kind;
    this.lastLineAt = now;
    this.unlogged = 0;
    return line;
  }

  /** A success at `now`: the streak it ends (for one line), or undefined when nothing was failing. */
  succeeded(now: number): { failures: number; seconds: number } | undefined {
    if (this.failures === 0) return undefined;
    const ended = { failures: this.failures, seconds: Math.round((now - this.startedAt) / 1000) };
    this.failures = 0;
    this.unlogged = 0;
    this.lastKind = undefined;
    return ended;
  }
}
