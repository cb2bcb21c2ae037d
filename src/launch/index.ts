import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';
import type { LauncherResolver } from './types.js';

/** The real launchers (command, http). Issue 4 fills this. */
export function createLaunchers(_deps: Omit<Deps, 'launchers'>): LauncherResolver {
  return () => undefined;
}

/** Loops that bring runs in (tick scheduler, lease renewal). Issue 4 fills this. */
export function runLoops(_deps: Deps): LoopSpec[] {
  return [];
}
