import type { Deps } from '../deps.js';
import type { LoopSpec } from './runner.js';

/** The monitoring engine's loops (poller, retry, escalation, freshness…). Issue 3 fills this. */
export function engineLoops(_deps: Deps): LoopSpec[] {
  return [];
}
