import type { Deps } from '../deps.js';
import { LEASE_RENEW_INTERVAL_MS, renewHeldRuns, type HeldRuns } from '../ledger/run-leases.js';
import type { LoopSpec } from './runner.js';

type LeaseDeps = Pick<Deps, 'db' | 'clock' | 'replicaId'>;

/** Renews the leases of the attempts this replica supervises (`HeldRuns`), well inside the lease; ends those no longer its own (`renewHeldRuns`). */
export function leaseRenewalLoop(deps: LeaseDeps, held: HeldRuns): LoopSpec {
  return {
    name: 'run-lease-renewal',
    step: 'lease-renewal',
    intervalMs: LEASE_RENEW_INTERVAL_MS,
    async tick() {
      await renewHeldRuns(deps, held, deps.clock.now());
      // Never "found work": renewing again at once would only hammer the database.
      return false;
    },
  };
}
