import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/env.js';
import type { Db } from '../../src/db/connect.js';
import type { Run, Workflow } from '../../src/db/schema.js';
import type { Deps } from '../../src/deps.js';
import { profileFor } from '../../src/domain/cadence.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { checkFreshness } from '../../src/engine/freshness.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { runInEngineOrder } from '../../src/engine/steps.js';
import { createUptimeHeartbeat, type UptimeHeartbeat } from '../../src/engine/uptime.js';
import { silentLogger } from '../../src/log.js';
import { withDestinationIdKey } from '../../src/ledger/destination-id-key.js';
import { insertRunningRun, newRunRow } from '../../src/ledger/runs.js';
import { launchRun } from '../../src/ledger/launch-run.js';
import { ScriptedLauncher, type ScriptedOutcome } from './engine-launcher.js';
import { minutes } from './factories.js';

export const PLATFORM = 'CPLATFORM';

export interface Engine {
  deps: Deps;
  clock: ManualClock;
  launcher: ScriptedLauncher;
  heartbeat: UptimeHeartbeat;
  /** Finishes due scripted runs and polls until the ledger is quiet. */
  drain(): Promise<void>;
  /** One engine step at the clock's current time, in the engine's order (src/engine/steps.ts): heartbeat, lease renewal, freshness, drain, escalation clock. */
  step(): Promise<void>;
}

/**
 * createEngine with the database's destination id key in its configuration,
 * as a replica has it (main.ts): for tenants with webhook destinations, whose
 * ids are digests under that key.
 */
export async function createKeyedEngine(db: Db, start: Date | string, env: Record<string, string> = {}): Promise<Engine> {
  const engine = createEngine(db, start, env);
  engine.deps.config = await withDestinationIdKey(db, engine.deps.config);
  return engine;
}

/** The real engine's loop bodies, driven by hand on a ManualClock. */
export function createEngine(db: Db, start: Date | string, env: Record<string, string> = {}, replicaId = 'engine-a', clock = new ManualClock(start)): Engine {
  const config = loadConfig({ LOG_LEVEL: 'silent', PLATFORM_CHANNEL: PLATFORM, REPLICA_ID: replicaId, ...env });
  const base = { db, clock, config, logger: silentLogger, replicaId };
  const launcher = new ScriptedLauncher(base);
  const deps: Deps = { ...base, launchers: launcher.resolver };
  const heartbeat = createUptimeHeartbeat(deps);
  const drain = async () => {
    for (let i = 0; i < 1000; i++) {
      const finished = await launcher.finishDue();
      const found = await pollFinishedRuns(deps);
      if (!found && finished === 0) return;
    }
    throw new Error('engine did not settle');
  };
  return {
    deps,
    clock,
    launcher,
    heartbeat,
    drain,
    async step() {
      // Runs ending and the poller are one drain: a scripted run may end again once polled.
      await runInEngineOrder({
        heartbeat: () => heartbeat.beat(clock.now()),
        'lease-renewal': () => launcher.renewLeases(),
        freshness: () => checkFreshness(deps),
        poller: drain,
        'escalation-clock': () => runEscalationClock(deps),
      });
    },
  };
}

/** Steps the engine every `stepMs` of its clock (the last step lands on `until`) until `until`. */
export async function stepUntil(engine: Engine, until: Date, stepMs = 60_000): Promise<void> {
  while (engine.clock.now() < until) {
    engine.clock.advance(Math.min(stepMs, until.getTime() - engine.clock.now().getTime()));
    await engine.step();
  }
}

/** What the tick scheduler does for a managed workflow: insert the tick's original row, then launch it. */
export async function fireTick(engine: Engine, workflow: Workflow, tick: Date, outcome?: ScriptedOutcome): Promise<Run> {
  if (outcome) engine.launcher.script(workflow.id, outcome);
  const now = engine.clock.now();
  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
  const run = await engine.deps.db.transaction().execute((trx) =>
    insertRunningRun(trx, { workflow, tick, trigger: 'schedule', timeoutSeconds: profile.timeoutSeconds, leaseOwner: engine.deps.replicaId }, now),
  );
  if (!run) throw new Error(`tick ${tick.toISOString()} of ${workflow.name} already fired`);
  const tenant = await engine.deps.db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  await launchRun(engine.deps, run, workflow, tenant, profile.timeoutSeconds);
  return run;
}

/** An observed workflow's report of a finished tick, as the ingest API would write it. */
export async function reportRun(db: Db, workflow: Workflow, tick: Date | null, outcome: { status: 'succeeded' | 'failed'; error?: string; rows?: number; trigger?: Run['trigger'] }, now: Date): Promise<Run> {
  return db
    .insertInto('runs')
    .values(
      newRunRow({
        workflowId: workflow.id,
        tick,
        trigger: outcome.trigger ?? (tick ? 'external' : 'manual'),
        status: outcome.status,
        attemptStatus: outcome.status,
        attemptError: outcome.error ?? null,
        error: outcome.error ?? null,
        rows: outcome.rows ?? null,
        startedAt: tick ?? now,
        finishedAt: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function notificationStory(db: Db, alertId: number) {
  return db
    .selectFrom('notifications')
    .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
    .select(['notifications.destination', 'notifications.status', 'alertEvents.kind', 'alertEvents.data'])
    .where('notifications.alertId', '=', alertId)
    .orderBy('notifications.id')
    .execute();
}

/** The seed night's daily tick (seeds/000): nightly-pipeline at 02:00 on 10 March 2026, UTC. */
export const SEED_NIGHTLY_TICK = new Date('2026-03-10T02:00:00Z');

export type SeedOutcome = (workflow: Workflow, tick: Date, attempt: number) => 'ok' | 'fail';

/**
 * Drives seeds/000 "The same incident, replayed" to `until`: a minute-by-minute
 * step of the engine, firing the five-minute quality-check and the 02:00
 * nightly-pipeline. Each attempt of a tick (1 + the profile's retries) is
 * scripted up front with `outcomeFor`'s answer and takes three minutes of the
 * test clock. `beforeStep` acts at a minute before the engine steps (a manual
 * run, say); `afterStep` after it (deliver what the step queued).
 */
export async function driveSeedNight(
  engine: Engine,
  workflows: { nightly: Workflow; check: Workflow },
  until: Date,
  outcomeFor: SeedOutcome,
  hooks: { beforeStep?: (now: Date) => Promise<void>; afterStep?: (now: Date) => Promise<void> } = {},
): Promise<void> {
  const { nightly, check } = workflows;
  const scriptAttempts = (w: Workflow, tick: Date) => {
    const { retries } = profileFor(w.cron, w.timezone, w.policy, tick);
    for (let attempt = 1; attempt <= 1 + retries; attempt++) {
      const ok = outcomeFor(w, tick, attempt) === 'ok';
      engine.launcher.script(w.id, ok ? { status: 'succeeded', afterMs: minutes(3) } : { status: 'failed', error: `relation "orders_${tick.getTime()}" refresh failed: connection reset`, stage: 'load', afterMs: minutes(3) });
    }
  };
  while (engine.clock.now() < until) {
    engine.clock.advance(minutes(1));
    const now = engine.clock.now();
    if (now.getUTCMinutes() % 5 === 0) {
      scriptAttempts(check, now);
      await fireTick(engine, check, now);
    }
    if (now.getTime() === SEED_NIGHTLY_TICK.getTime()) {
      scriptAttempts(nightly, now);
      await fireTick(engine, nightly, now);
    }
    await hooks.beforeStep?.(now);
    await engine.step();
    await hooks.afterStep?.(now);
  }
}
