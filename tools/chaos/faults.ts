import type { Db } from '../../src/db/connect.js';
import { systemClock } from '../../src/clock.js';
import type { RecordingSlackApi, SlackFault } from '../../src/replay/recording-slack-api.js';
import type { PostgresHandle } from './postgres-handle.js';
import type { ReplicaSet } from './replicas.js';
import type { StallMonitor } from './stalls.js';
import { terminateBotConnections } from './postgres-handle.js';
import type { Probe } from './probe.js';

/** What a chaos scenario does to the bot while the driver works: the faults, started and stopped. */

export interface ScenarioSpec {
  name: string;
  /** kill -9 a random replica every few seconds and restart it. */
  kills: boolean;
  /** The Slack server answers at random with 429, 500, ratelimited, resets, slow and lost answers. */
  slackFaults: boolean;
  /** A fixed schedule (DATABASE_FAULTS): pg_terminate_backend of every bot connection, and restarts of Postgres when it is ours. */
  databaseFaults: boolean;
  /** The bot token is revoked for a while (every Web API call answers token_revoked), then re-enabled. */
  revokedToken: boolean;
}

/** How long the revoked-token scenario's token is refused. */
export const REVOKED_MS = 20_000;

/**
 * The database-faults scenario's schedule, the same on every machine: after
 * each pause (ms), terminate every bot connection, or restart Postgres (when
 * the suite started it). A slow machine does not get more faults.
 */
export const DATABASE_FAULTS: { afterMs: number; fault: 'terminate' | 'restart' }[] = [
  { afterMs: 5_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'restart' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'restart' },
  { afterMs: 4_000, fault: 'terminate' },
  { afterMs: 4_000, fault: 'terminate' },
];
export interface ChaosTargets {
  replicas: ReplicaSet;
  slack: RecordingSlackApi;
  server: PostgresHandle;
  stalls: StallMonitor;
  admin: Db;
  database: string;
  /** Where a fault that could not be injected is told. */
  problems: string[];
  /** With CHAOS_LOG_DIR: each fault is written to the probe log as it is injected. */
  probe?: Probe;
}

export type ChaosActions = { slackFaults: number; terminations: number; terminated: number; pgRestarts: number; readyzOutage: number; readyzChecks: number; revoked: number };

/** Starts the scenario's faults; `stop()` ends them and tells what was done. */
export function startChaos(spec: ScenarioSpec, c: ChaosTargets): { stop(): Promise<ChaosActions> } {
  const actions: ChaosActions = { slackFaults: 0, terminations: 0, terminated: 0, pgRestarts: 0, readyzOutage: 0, readyzChecks: 0, revoked: 0 };
  let stopping = false;
  const chaos: Promise<void>[] = [];
  const { replicas, slack, problems } = c;

  if (spec.kills) {
    chaos.push(
      (async () => {
        while (!stopping) {
          await systemClock.sleep(2_000 + Math.random() * 3_000);
          if (stopping) break;
          const victim = replicas.replicas[Math.floor(Math.random() * replicas.replicas.length)]!;
          if (!victim.ready) continue;
          await replicas.killAndRestart(victim, 300 + Math.random() * 1_500).catch((e: Error) => problems.push(e.message));
        }
      })(),
    );
  }
  if (spec.slackFaults) {
    const faults: SlackFault[] = [
      { kind: 'http_429', retryAfterSeconds: 1 },
      { kind: 'http_500' },
      { kind: 'ratelimited' },
      { kind: 'reset' },
      { kind: 'lost' },
      { kind: 'slow', delayMs: 11_000 },
    ];
    chaos.push(
      (async () => {
        while (!stopping) {
          await systemClock.sleep(400);
          const fault = faults[Math.floor(Math.random() * faults.length)]!;
          // Slow answers tie up a call past the client's 10 s timeout: a few of them go a long way.
          if (fault.kind === 'slow' && Math.random() < 0.7) continue;
          slack.failNext(fault, { method: Math.random() < 0.8 ? 'chat.postMessage' : undefined });
          actions.slackFaults++;
        }
      })(),
    );
  }
  if (spec.databaseFaults) chaos.push(databaseFaultSchedule(c, actions));
  if (spec.revokedToken) {
    // The token is refused for the first REVOKED_MS of the run, every call alike, then re-enabled:
    // nothing raised meanwhile may be dead or lost, and nothing may be sent twice once it works.
    slack.failNext({ kind: 'platform_error', error: 'token_revoked' }, { times: Infinity });
    // At least REVOKED_MS, and until a few calls were refused (a loaded machine may answer nothing that soon), at most 2 minutes.
    const refused = () => slack.calls.filter((c) => c.outcome === 'token_revoked').length;
    chaos.push(
      (async () => {
        const started = systemClock.now().getTime();
        for (;;) {
          const elapsed = systemClock.now().getTime() - started;
          if (elapsed >= 120_000 || (elapsed >= REVOKED_MS && refused() >= 10)) break;
          await systemClock.sleep(500);
        }
        slack.clearFaults();
        actions.revoked = refused();
      })(),
    );
  }
  return {
    async stop() {
      stopping = true;
      await Promise.all(chaos);
      return actions;
    },
  };
}

/** DATABASE_FAULTS in order: connections terminated, and Postgres restarted when the suite owns it (with /readyz sampled while it is down). */
async function databaseFaultSchedule(c: ChaosTargets, actions: ChaosActions): Promise<void> {
  const { replicas, server, stalls, admin, database, probe } = c;
  for (const step of DATABASE_FAULTS) {
    await systemClock.sleep(step.afterMs);
    if (step.fault === 'restart' && server.restartable) {
      probe?.event('stopping postgres');
      stalls.databaseDown();
      await server.down();
      probe?.event('postgres stopped');
      actions.pgRestarts++;
      // While it is down, every replica's /readyz must say so (an answer that does not come in time is not "ready" either).
      await systemClock.sleep(2_500);
      for (const r of replicas.live()) {
        actions.readyzChecks++;
        const res = await fetch(`${r.url}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
        if (res?.status !== 200) actions.readyzOutage++;
      }
      await systemClock.sleep(2_000);
      probe?.event('starting postgres');
      await server.up();
      stalls.databaseUp();
      probe?.event('postgres started');
      continue;
    }
    const n = await terminateBotConnections(admin, database).catch(() => 0);
    probe?.event('terminated', { connections: n });
    actions.terminations++;
    actions.terminated += n;
  }
}
