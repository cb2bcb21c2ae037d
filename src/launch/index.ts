import type { Deps } from '../deps.js';
import { createCommandLauncher } from './command-launcher.js';
import { createHttpLauncher } from './http-launcher.js';
import { HeldRuns, registerHeldRuns } from '../ledger/run-leases.js';
import type { LauncherResolver } from '../launcher.js';

/** The real launchers: one of each kind per replica, chosen by the workflow's `launcher.kind`. */
export function createLaunchers(deps: Omit<Deps, 'launchers'>): LauncherResolver {
  const held = new HeldRuns();
  // Outcome reports retry through a database outage for a lease period; the replica stopping (past its grace) ends that.
  const stopping = new AbortController();
  const command = createCommandLauncher(deps, held, { stop: stopping.signal });
  const http = createHttpLauncher(deps, held, { stop: stopping.signal });
  const resolve: LauncherResolver = (workflow) => {
    switch (workflow.launcher?.kind) {
      case 'command':
        return command;
      case 'http':
        return http;
      default:
        return undefined;
    }
  };
  registerHeldRuns(resolve, held);
  shutdowns.set(resolve, async (graceMs) => {
    // Reports still waiting for the database when the grace ends get one last try (the interrupted commands' too).
    const graceOver = setTimeout(() => stopping.abort(), graceMs);
    try {
      await Promise.all([command.shutdown(graceMs), http.shutdown(graceMs)]);
    } finally {
      clearTimeout(graceOver);
      stopping.abort();
    }
  });
  return resolve;
}

const shutdowns = new WeakMap<LauncherResolver, (graceMs: number) => Promise<void>>();

/** Ends what this replica's launchers still supervise (see CommandLauncher.shutdown). */
export async function shutdownLaunchers(resolver: LauncherResolver, graceMs: number): Promise<void> {
  await shutdowns.get(resolver)?.(graceMs);
}
