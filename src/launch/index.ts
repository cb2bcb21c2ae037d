import type { Deps } from '../deps.js';
import { createCommandLauncher } from './command-launcher.js';
import { createHttpLauncher } from './http-launcher.js';
import { HeldRuns, registerHeldRuns } from '../ledger/run-leases.js';
import type { LauncherResolver } from '../launcher.js';

/** The real launchers: one of each kind per replica, chosen by the workflow's `launcher.kind`. */
export function createLaunchers(deps: Omit<Deps, 'launchers'>): LauncherResolver {
  const held = new HeldRuns();
  const command = createCommandLauncher(deps, held);
  const http = createHttpLauncher(deps, held);
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
  shutdowns.set(resolve, (graceMs) => command.shutdown(graceMs));
  return resolve;
}

const shutdowns = new WeakMap<LauncherResolver, (graceMs: number) => Promise<void>>();

/** Ends what this replica's launchers still supervise (see CommandLauncher.shutdown). */
export async function shutdownLaunchers(resolver: LauncherResolver, graceMs: number): Promise<void> {
  await shutdowns.get(resolver)?.(graceMs);
}
