import type { Attempt, OutcomeRule } from './scenario.js';

export interface ScriptedAttempt {
  attempt: Attempt;
  durationMs: number;
}

const DEFAULT_DURATION_MS = 60_000;
const SUCCESS: Attempt = { status: 'succeeded' };

/**
 * What attempt `attempt` (1-based) of `tick` does: the attempt-th entry of the
 * first rule for the workflow whose from–to (inclusive) covers the tick; the
 * last entry repeats when there are more attempts than entries. No rule: it
 * succeeds after the default minute.
 */
export function scriptedAttempt(rules: readonly OutcomeRule[], workflowKey: string, tick: Date, attempt: number): ScriptedAttempt {
  const t = tick.getTime();
  const rule = rules.find((r) => r.workflow === workflowKey && (!r.from || r.from.getTime() <= t) && (!r.to || t <= r.to.getTime()));
  if (!rule) return { attempt: SUCCESS, durationMs: DEFAULT_DURATION_MS };
  const entry = rule.attempts[Math.min(attempt, rule.attempts.length) - 1]!;
  const own = 'durationSeconds' in entry ? entry.durationSeconds : undefined;
  return { attempt: entry, durationMs: (own ?? rule.durationSeconds) * 1000 };
}
