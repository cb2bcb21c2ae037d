import type { Express } from 'express';
import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';

export interface SlackRuntime {
  /** Loops that deliver the outbox (Slack and other destinations). */
  loops: LoopSpec[];
  stop(): Promise<void>;
}

/** Bolt app, listeners and outbox delivery. Issue 5 fills this. */
export async function startSlack(_http: Express, _deps: Deps): Promise<SlackRuntime> {
  return { loops: [], stop: async () => {} };
}
