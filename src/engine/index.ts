import type { Deps } from '../deps.js';
import { RUNS_FINISHED_CHANNEL } from '../ledger/runs.js';
import { heldRunsOf } from '../ledger/run-leases.js';
import { runEscalationClock } from './escalation.js';
import { checkFreshness } from './freshness.js';
import { leaseRenewalLoop } from './lease-renewal.js';
import { adaptivePoller } from './poller.js';
import { checkRunDurations } from './run-duration.js';
import type { LoopSpec } from './runner.js';
import { tickSchedulerLoop } from './tick-scheduler.js';
import { createUptimeHeartbeat, UPTIME_BEAT_MS } from './uptime.js';

/** How often the freshness detector looks for overdue runs and missed ticks. */
export const FRESHNESS_INTERVAL_MS = 10_000;

/** The monitoring engine's loops: poller (woken by finished runs), escalation clock, freshness detector, run durations, uptime heartbeat. */
export function engineLoops(deps: Deps): LoopSpec[] {
  const heartbeat = createUptimeHeartbeat(deps);
  return [
    {
      name: 'monitor-uptime',
      step: 'heartbeat',
      intervalMs: UPTIME_BEAT_MS,
      tick: async () => {
        await heartbeat.beat(deps.clock.now());
        return false;
      },
    },
    {
      name: 'run-poller',
      step: 'poller',
      intervalMs: deps.config.POLL_INTERVAL_SECONDS * 1000,
      wakeOn: [RUNS_FINISHED_CHANNEL],
      tick: adaptivePoller(deps),
    },
    {
      name: 'escalation-clock',
      step: 'escalation-clock',
      intervalMs: deps.config.ESCALATION_INTERVAL_SECONDS * 1000,
      tick: () => runEscalationClock(deps),
    },
    {
      name: 'freshness',
      step: 'freshness',
      intervalMs: FRESHNESS_INTERVAL_MS,
      tick: async () => {
        // Beat first: a replica that just started must count itself as up before judging ticks.
        await heartbeat.beat(deps.clock.now());
        return checkFreshness(deps);
      },
    },
    {
      // Running long and completion deadlines (issue 16): told before the timeout, so on the freshness detector's pace.
      name: 'run-duration',
      step: 'run-duration',
      intervalMs: FRESHNESS_INTERVAL_MS,
      tick: () => checkRunDurations(deps),
    },
  ];
}

/** Loops that bring runs in: the tick scheduler, and lease renewal of the attempts this replica supervises. */
export function runLoops(deps: Deps): LoopSpec[] {
  const loops = [tickSchedulerLoop(deps)];
  const held = heldRunsOf(deps.launchers);
  if (held) loops.push(leaseRenewalLoop(deps, held));
  return loops;
}
