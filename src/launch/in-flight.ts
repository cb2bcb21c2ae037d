/**
 * What a launcher still supervises when its replica stops: a command running,
 * an http launch waiting for its answer. The replica gives them its shutdown
 * grace, then interrupts the rest (each records its run failed as
 * interrupted) and waits for them to end: nothing is left running or waiting
 * under a lease nobody renews. From the moment it starts stopping, nothing
 * new starts (a Run now its server is still answering): that launch is
 * refused, and its run fails at once saying why, rather than start a job
 * the replica's exit cuts off and "worker lost" reports a lease later.
 */
export interface InFlight {
  /** Ends it now; `done` settles once its run's end is recorded. */
  interrupt(): void;
  done: Promise<void>;
}

/** Why a stopping replica's launcher starts nothing. */
export const SHUTTING_DOWN = 'this scheduler-bot replica is shutting down';

export class InFlightRuns {
  private readonly live = new Map<number, InFlight>();
  private stopping = false;

  /** Whether a launch may start (the replica is not stopping). */
  get open(): boolean {
    return !this.stopping;
  }

  add(runId: number, run: InFlight): void {
    this.live.set(runId, run);
  }

  delete(runId: number): void {
    this.live.delete(runId);
  }

  async shutdown(graceMs: number): Promise<void> {
    this.stopping = true;
    const running = [...this.live.values()];
    if (running.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
    const waited = await Promise.race([Promise.allSettled(running.map((r) => r.done)).then(() => true), graceOver]);
    clearTimeout(timer);
    if (waited) return;
    for (const r of this.live.values()) r.interrupt();
    await Promise.allSettled([...this.live.values()].map((r) => r.done));
  }
}
