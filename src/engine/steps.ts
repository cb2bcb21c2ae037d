/**
 * The order of the engine's steps, written once. It follows the data: the
 * replica says it is up → runs end and reports come in → due ticks fire →
 * people act → leases on supervised runs are renewed → overdue runs fail and
 * missed ticks are recorded → runs going long and missed deadlines are told → finished runs are routed and evaluated →
 * warnings escalate, silences end → the outbox delivers.
 *
 * - The app (src/app.ts) starts one loop per step in this order; they then
 *   run side by side, woken by NOTIFY, so the order there is the start order.
 * - The replay's virtual driver (src/replay/virtual-driver.ts) settles each
 *   instant by calling the steps in this order on a ManualClock.
 * - The test harness (test/helpers/engine-harness.ts) does the same for the
 *   steps it drives.
 *
 * `runs-end`, `reports` and `actions` are the world outside the engine
 * (launched processes exiting, jobs reporting, people clicking): in a replica
 * they arrive whenever they do; the replay and the harness script them here.
 */
export const ENGINE_STEPS = ['heartbeat', 'runs-end', 'reports', 'tick-scheduler', 'actions', 'lease-renewal', 'freshness', 'run-duration', 'poller', 'escalation-clock', 'outbox'] as const;

export type EngineStep = (typeof ENGINE_STEPS)[number];

/** Calls the given steps' work one after another in the engine's order; steps without work are passed over. */
export async function runInEngineOrder(work: Partial<Record<EngineStep, () => Promise<unknown>>>): Promise<void> {
  for (const step of ENGINE_STEPS) await work[step]?.();
}

/** Items (loop specs) in the engine's order of their step; those without one keep their order after the rest. */
export function inEngineOrder<T extends { step?: EngineStep }>(items: readonly T[]): T[] {
  const rank = (item: T) => (item.step ? ENGINE_STEPS.indexOf(item.step) : ENGINE_STEPS.length);
  return [...items].sort((a, b) => rank(a) - rank(b));
}
