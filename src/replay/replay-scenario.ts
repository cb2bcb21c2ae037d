import { ManualClock, type Clock } from '../clock.js';
import { loadConfig } from '../config/env.js';
import type { Db } from '../db/connect.js';
import type { Deps } from '../deps.js';
import { createUptimeHeartbeat } from '../engine/uptime.js';
import { withDestinationIdKey } from '../ledger/destination-id-key.js';
import { silentLogger, type Logger } from '../log.js';
import { createOutboxSender } from '../notify/sender.js';
import { RecordingSlackApi } from './recording-slack-api.js';
import { createHeldBackNotes } from '../slack/transport/held-back-notes.js';
import { createRootRefresher } from '../slack/transport/root-refresher.js';
import { createWebClient, webOutboxApi } from '../slack/transport/slack-api.js';
import { slackTransport } from '../slack/transport/slack-transport.js';
import { loadScenario } from './load-scenario.js';
import { OutsideScheduler } from './outside-scheduler.js';
import type { ActionRecord } from './scenario-actions.js';
import { ScenarioLauncher } from './scenario-launcher.js';
import type { Scenario } from './scenario.js';
import { tally, transcriptCalls, type Transcript } from './transcript.js';
import { VirtualDriver } from './virtual-driver.js';

export interface ReplayOptions {
  /** A fresh, migrated, empty database; the replay fills it. */
  db: Db;
  logger?: Logger;
  /** Overrides ESCALATION_INTERVAL_SECONDS (default: the engine's 60). */
  escalationIntervalSeconds?: number;
}

export interface ReplayResult {
  scenario: Scenario;
  transcript: Transcript;
  oneMessagePerFailure: number;
  actions: ActionRecord[];
  /** Virtual instants the clock stopped at, and the wall time it took (milliseconds). */
  instants: number;
  elapsedMs: number;
  /** Where the wall time went, per engine phase (milliseconds). */
  phaseMs: Record<string, number>;
}

const REPLICA = 'replay';

/**
 * The clock the engine is given: the virtual time, and no sleeping. Only the
 * driver moves time, between instants; a loop body that waited on the clock
 * inside an instant would wait forever, so it fails loudly instead.
 */
function instantClock(clock: ManualClock): Clock {
  return {
    now: () => clock.now(),
    sleep: (ms) => Promise.reject(new Error(`a loop tried to sleep ${ms} ms inside replay instant ${clock.now().toISOString()}; only the replay driver moves its clock`)),
  };
}

/**
 * Runs a scenario through the real engine on a virtual clock: the tick
 * scheduler, retry engine, poller and evaluator, escalation clock, freshness
 * detector and the outbox sender, with the real Slack transport and Block Kit
 * builders talking HTTP to a recording Slack Web API on loopback. The stand-ins
 * are the clock, the scenario's launcher, and Slack's end of the wire.
 */
export async function replayScenario(scenario: Scenario, options: ReplayOptions): Promise<ReplayResult> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const { db } = options;
  const clock = new ManualClock(scenario.start);
  const slack = await RecordingSlackApi.start({ clock });
  try {
    const config = await withDestinationIdKey(
      db,
      loadConfig({
        LOG_LEVEL: 'silent',
        REPLICA_ID: REPLICA,
        ...(scenario.platformChannel ? { PLATFORM_CHANNEL: scenario.platformChannel } : {}),
        ...(options.escalationIntervalSeconds ? { ESCALATION_INTERVAL_SECONDS: String(options.escalationIntervalSeconds) } : {}),
      }),
    );
    const ids = await loadScenario(db, scenario);
    const keys = new Map([...ids].map(([key, id]) => [id, key]));
    const base = { db, clock: instantClock(clock), config, logger, replicaId: REPLICA };
    const launcher = new ScenarioLauncher(base, scenario.outcomes, (id) => keys.get(id)!);
    const deps: Deps = { ...base, launchers: launcher.resolver };

    const api = webOutboxApi(createWebClient('xoxb-replay', { apiUrl: slack.url, logger }));
    const driver = new VirtualDriver({
      deps,
      clock,
      scenario,
      launcher,
      outside: new OutsideScheduler(deps, scenario.workflows, scenario.outcomes, launcher, scenario.start, scenario.until),
      heartbeat: createUptimeHeartbeat(deps),
      sender: createOutboxSender(deps, [slackTransport(deps, api)]),
      refresher: createRootRefresher(deps, api),
      notes: createHeldBackNotes(deps, api),
      workflowIdOf: (key) => ids.get(key)!,
    });
    const { instants, actions, phaseMs } = await driver.run();

    const calls = transcriptCalls(slack.calls, [...scenario.tenants.map((t) => t.channel), ...(scenario.platformChannel ? [scenario.platformChannel] : [])]);
    const { summary, oneMessagePerFailure } = await tally(db, calls, scenario.platformChannel);
    return { scenario, transcript: { calls, summary }, oneMessagePerFailure, actions, instants, phaseMs, elapsedMs: performance.now() - started };
  } finally {
    await slack.close();
  }
}
