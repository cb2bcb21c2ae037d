import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { createDb, type Db } from '../../src/db/connect.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import type { Logger } from '../../src/log.js';
import { RecordingSlackApi, type SlackFault } from '../../src/replay/recording-slack-api.js';
import { ReplicaSet } from './replicas.js';
import type { ScenarioResult } from './report.js';
import { StallMonitor } from './stalls.js';
import { verifyScenario } from './verify.js';
import { buildWorkload, driveWorkload, signSlackRequest, terminateBotConnections } from './workload.js';

export interface ScenarioSpec {
  name: string;
  /** kill -9 a random replica every few seconds and restart it. */
  kills: boolean;
  /** The Slack server answers at random with 429, 500, ratelimited, resets, slow and lost answers. */
  slackFaults: boolean;
  /** A fixed schedule (DATABASE_FAULTS): pg_terminate_backend of every bot connection, and restarts of Postgres when it is ours. */
  databaseFaults: boolean;
  /** The bot token is revoked for a while: invalid_auth. */
  revokedToken: boolean;
}

export const SCENARIOS: ScenarioSpec[] = [
  { name: 'replica kills', kills: true, slackFaults: false, databaseFaults: false, revokedToken: false },
  { name: 'slack faults + kills', kills: true, slackFaults: true, databaseFaults: false, revokedToken: false },
  { name: 'database faults', kills: false, slackFaults: false, databaseFaults: true, revokedToken: false },
  { name: 'revoked token', kills: false, slackFaults: false, databaseFaults: false, revokedToken: true },
];

export interface ChaosOptions {
  /** An admin URL of a Postgres to create scenario databases on; an embedded one (restartable) when absent. */
  databaseUrl?: string;
  workflows: number;
  logger: Logger;
  only?: string[];
}

const API_TOKEN = 'chaos-admin-token-0123456789';
const SIGNING_SECRET = 'chaos-signing-secret-0123456789';
const BOT_TOKEN = 'xoxb-chaos-token';
const SETTLE_TIMEOUT_MS = 180_000;
/** How long faults are injected in each scenario, at least. */
const MIN_CHAOS_MS = 40_000;
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
/** Longest a due tick, a finished run or a pending notification may wait while the database is up (database-faults scenario). */
export const STALL_LIMIT_SECONDS = 10;

/** Every scenario in turn, each on its own database, Slack server and three replicas. */
export async function runChaos(o: ChaosOptions): Promise<ScenarioResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'scheduler-chaos-'));
  // Ours: as root, the embedded server's user must be able to pass through it to its data.
  await chmod(dir, 0o711);
  let embedded: EmbeddedServer | undefined;
  let adminUrl = o.databaseUrl;
  if (!adminUrl) {
    o.logger.info('no DATABASE_URL: starting an embedded PostgreSQL for the chaos suite');
    embedded = await startEmbeddedPostgres(join(dir, 'pg'), { persistent: true });
    adminUrl = embedded.url('postgres');
  }
  const server = new PostgresHandle(join(dir, 'pg'), adminUrl, embedded);
  const results: ScenarioResult[] = [];
  try {
    for (const spec of SCENARIOS.filter((s) => !o.only?.length || o.only.some((n) => s.name.includes(n)))) {
      o.logger.info({ scenario: spec.name }, 'scenario starting');
      const result = await runScenario(spec, server, dir, o);
      o.logger.info({ scenario: spec.name, seconds: Math.round(result.seconds), ...result.verdict, problems: result.problems.slice(0, 5) }, 'scenario finished');
      results.push(result);
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}

/** The Postgres the scenarios share; restartable only when the suite started it. */
class PostgresHandle {
  constructor(
    private readonly dir: string,
    readonly adminUrl: string,
    private embedded: EmbeddedServer | undefined,
  ) {}

  get restartable(): boolean {
    return !!this.embedded;
  }

  url(database: string): string {
    const u = new URL(this.adminUrl);
    u.pathname = `/${database}`;
    return u.toString();
  }

  async down(): Promise<void> {
    await this.embedded?.stop();
  }

  async up(): Promise<void> {
    if (this.embedded) this.embedded = await startEmbeddedPostgres(this.dir, { persistent: true });
  }

  async stop(): Promise<void> {
    await this.embedded?.stop();
  }
}

/** A pool of the driver's own, named so that terminating the bot's connections leaves it alone. */
function driverDb(url: string): Db {
  const pool = new pg.Pool({ connectionString: url, max: 10, application_name: 'chaos-driver' });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return createDb(pool);
}

async function runScenario(spec: ScenarioSpec, server: PostgresHandle, root: string, o: ChaosOptions): Promise<ScenarioResult> {
  const started = systemClock.now().getTime();
  const database = `chaos_${spec.name.replace(/[^a-z]+/g, '_')}_${process.pid}`;
  const admin = driverDb(server.adminUrl);
  await adminQuery(admin, `drop database if exists ${database} with (force)`);
  await adminQuery(admin, `create database ${database}`);
  const dir = await mkdtemp(join(root, 'scenario-'));
  const launchLog = join(dir, 'launches.log');
  const workload = buildWorkload(o.workflows, launchLog);
  await writeFile(join(dir, 'workflows.json'), JSON.stringify(workload.file, null, 2));

  const slack = await RecordingSlackApi.start({ clock: systemClock, postMessageMinIntervalMs: 1000 });
  const env = {
    DATABASE_URL: server.url(database),
    WORKFLOWS_FILE: join(dir, 'workflows.json'),
    API_TOKEN,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    POLL_INTERVAL_SECONDS: '2',
    ESCALATION_INTERVAL_SECONDS: '2',
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_SECONDS: '1',
  };
  const replicas = await ReplicaSet.start(3, env);
  const db = driverDb(server.url(database));
  const stalls = new StallMonitor(db);
  stalls.start();
  const problems: string[] = [];
  const actions = { slackFaults: 0, terminations: 0, terminated: 0, pgRestarts: 0, readyzOutage: 0, readyzChecks: 0, revoked: 0 };
  let stopping = false;
  const chaos: Promise<void>[] = [];

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
  if (spec.databaseFaults) {
    chaos.push(
      (async () => {
        for (const step of DATABASE_FAULTS) {
          await systemClock.sleep(step.afterMs);
          if (step.fault === 'restart' && server.restartable) {
            stalls.databaseDown();
            await server.down();
            actions.pgRestarts++;
            // While it is down, every replica's /readyz must say so (an answer that does not come in time is not "ready" either).
            await systemClock.sleep(2_500);
            for (const r of replicas.live()) {
              actions.readyzChecks++;
              const res = await fetch(`${r.url}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
              if (res?.status !== 200) actions.readyzOutage++;
            }
            await systemClock.sleep(2_000);
            await server.up();
            stalls.databaseUp();
            continue;
          }
          const n = await terminateBotConnections(admin, database).catch(() => 0);
          actions.terminations++;
          actions.terminated += n;
        }
      })(),
    );
  }
  if (spec.revokedToken) {
    // The token is revoked for the first posts: they go dead, and the App Home must list them.
    slack.failNext({ kind: 'platform_error', error: 'invalid_auth' }, { method: 'chat.postMessage', times: 25 });
    actions.revoked = 25;
  }

  const driven = await driveWorkload(workload, { db, replicas, apiToken: API_TOKEN, signingSecret: SIGNING_SECRET, stepTimeoutMs: 120_000, log: (line) => o.logger.info({ scenario: spec.name }, line) });
  // The faults go on for a while after the driver is done: deliveries, ticks and leases are still in flight.
  await systemClock.sleep(Math.max(0, started + MIN_CHAOS_MS - systemClock.now().getTime()));
  stopping = true;
  await Promise.all(chaos);
  slack.clearFaults();
  problems.push(...driven.stuck);
  for (const r of replicas.replicas) if (!r.ready) await replicas.restart(r).catch((e: Error) => problems.push(e.message));
  if (spec.databaseFaults) {
    const exited = replicas.restarts;
    if (exited > 0) problems.push(`${exited} replica restarts during a database-only scenario: loops must recover without one`);
    if (server.restartable && actions.readyzOutage < actions.readyzChecks) problems.push(`/readyz said ready during the outage on ${actions.readyzChecks - actions.readyzOutage} of ${actions.readyzChecks} checks`);
  }

  o.logger.info({ scenario: spec.name, problems: problems.length }, 'driver done; settling');
  // Let in-flight work land: leases of killed replicas run out (60 s), retries back off.
  const settled = await settle(db, SETTLE_TIMEOUT_MS);
  if (!settled) problems.push(`not settled after ${SETTLE_TIMEOUT_MS / 1000}s`);
  // Slow answers still on their way must be counted.
  await systemClock.sleep(spec.slackFaults ? 11_000 : 500);

  if (spec.revokedToken) {
    const shown = await homeShowsDead(db, replicas, slack);
    if (!shown) problems.push('the App Home does not list the dead notifications');
  }

  const longestStall = await stalls.stop();
  if (spec.databaseFaults && longestStall.seconds > STALL_LIMIT_SECONDS) {
    problems.push(`longest stall ${longestStall.seconds.toFixed(1)}s (${longestStall.what}) while the database was up: over ${STALL_LIMIT_SECONDS}s`);
  }
  const verdict = await verifyScenario(db, slack, workload, launchLog);
  if (spec.revokedToken && verdict.dead === 0) problems.push('the revoked token produced no dead rows');
  if (!spec.revokedToken && verdict.dead > 0) problems.push(`${verdict.dead} notifications dead without a permanent error`);
  problems.push(...verdict.storyMismatches.slice(0, 5));

  await replicas.stop();
  await slack.close();
  await db.destroy();
  await adminQuery(admin, `drop database if exists ${database} with (force)`).catch(() => {});
  await admin.destroy();

  const described = [
    `${o.workflows}+${workload.scheduled.length} workflows`,
    `${driven.reports} reports, ${driven.clicks} clicks, ${driven.runNows} run-nows`,
    spec.kills && `${replicas.kills} kills/${replicas.restarts} restarts`,
    spec.slackFaults && `${actions.slackFaults} Slack faults`,
    spec.databaseFaults && `${actions.terminations} terminations (${actions.terminated} conns)`,
    spec.databaseFaults && (server.restartable ? `${actions.pgRestarts} pg restarts (readyz not ready ${actions.readyzOutage}/${actions.readyzChecks})` : 'no pg restart (external DATABASE_URL)'),
    spec.revokedToken && `invalid_auth on ${actions.revoked} posts`,
    '2 faulty launchers (hang, SIGKILL)',
  ].filter((x): x is string => !!x);
  return { name: spec.name, actions: described, verdict, problems, longestStall, seconds: (systemClock.now().getTime() - started) / 1000 };
}

async function adminQuery(admin: Db, text: string): Promise<void> {
  const { sql } = await import('kysely');
  await sql.raw(text).execute(admin);
}

/** Nothing left to send and nothing left to evaluate, for a few consecutive looks. */
async function settle(db: Db, timeoutMs: number): Promise<boolean> {
  const until = systemClock.now().getTime() + timeoutMs;
  let quiet = 0;
  while (systemClock.now().getTime() < until) {
    try {
      const open = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('status', 'in', ['pending', 'sending']).executeTakeFirstOrThrow();
      const unevaluated = await db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['succeeded', 'failed', 'missed'])
        .where('processedAt', 'is', null)
        .executeTakeFirstOrThrow();
      quiet = Number(open.n) === 0 && Number(unevaluated.n) === 0 ? quiet + 1 : 0;
      if (quiet >= 3) return true;
    } catch {
      quiet = 0;
    }
    await systemClock.sleep(1_000);
  }
  return false;
}

/** Opens the App Home as Slack would (a signed app_home_opened event) and waits for it to list the dead rows. */
async function homeShowsDead(db: Db, replicas: ReplicaSet, slack: RecordingSlackApi): Promise<boolean> {
  const dead = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'dead').executeTakeFirstOrThrow();
  const body = JSON.stringify({
    token: 'legacy',
    team_id: 'T0CHAOS',
    api_app_id: 'A0CHAOS',
    type: 'event_callback',
    event_id: 'Ev0CHAOSHOME',
    event_time: 1,
    event: { type: 'app_home_opened', user: 'U0ONCALL', channel: 'D0ONCALL', tab: 'home' },
  });
  const replica = replicas.any();
  if (!replica) return false;
  await fetch(`${replica.url}/slack/events`, { method: 'POST', headers: signSlackRequest(SIGNING_SECRET, body, 'application/json'), body }).catch(() => undefined);
  const until = systemClock.now().getTime() + 30_000;
  while (systemClock.now().getTime() < until) {
    const view = JSON.stringify(slack.homeViews.get('U0ONCALL') ?? '');
    if (view.includes(`Undeliverable notifications* (${dead.n})`)) return true;
    await systemClock.sleep(500);
  }
  return false;
}
