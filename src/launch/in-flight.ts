/**
 * What a launcher still supervises when its replica stops: a command running,
 * an http launch waiting for its answer. The replica gives them its shutdown
 * grace, then interrupts the rest (each records its run failed as
 * interrupted) and waits for them to end: nothing is left running or waiting
 * under a lease nobody renews.
 */
export interface InFlight {
  /** Ends it now; `done` settles once its run's end is recorded. */
  interrupt(): void;
  done: Promise<void>;
}

export async function endInFlight(live: ReadonlyMap<number, InFlight>, graceMs: number): Promise<void> {
  const running = [...live.values()];
  if (running.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  const waited = await Promise.race([Promise.allSettled(running.map((r) => r.done)).then(() => true), graceOver]);
  clearTimeout(timer);
  if (waited) return;
  // Those started during the grace too.
  for (const r of live.values()) r.interrupt();
  await Promise.allSettled([...live.values()].map((r) => r.done));
}
