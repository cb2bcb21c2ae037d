import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import type { Logger } from '../../src/log.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { REVOKED_MS, startChaos, type ChaosActions, type ScenarioSpec } from './faults.js';
import { adminQuery, driverDb, PostgresHandle, serverLog, settle } from './postgres-handle.js';
import { Probe } from './probe.js';
import { ReplicaSet } from './replicas.js';
import type { ScenarioResult } from './report.js';
import { StallMonitor } from './stalls.js';
import { verifyScenario } from './verify.js';
import { dumpEvidence } from './dump.js';
import { buildWorkload, driveWorkload, ONCALL_USER, type DriverStats, type Workload } from './workload.js';

export { DATABASE_FAULTS, type ScenarioSpec } from './faults.js';

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
    embedded = await startEmbeddedPostgres(join(dir, 'pg'), { persistent: true, onLog: serverLog() });
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

  const slack = await startSlack(workload);
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
    ...(process.env.CHAOS_REPLICA_NODE_OPTIONS ? { NODE_OPTIONS: process.env.CHAOS_REPLICA_NODE_OPTIONS } : {}),
  };
  const replicas = await ReplicaSet.start(3, env);
  const db = driverDb(server.url(database));
  const stalls = new StallMonitor(db);
  stalls.start();
  const probe = Probe.fromEnv({ db, replicas, database, scenario: spec.name, clusterDir: server.clusterDir, waits: () => stalls.current });
  probe?.start();
  const problems: string[] = [];
  const chaos = startChaos(spec, { replicas, slack, server, stalls, admin, database, problems, probe });

  const driven = await driveWorkload(workload, { db, replicas, apiToken: API_TOKEN, signingSecret: SIGNING_SECRET, stepTimeoutMs: 120_000, log: (line) => o.logger.info({ scenario: spec.name }, line) });
  // The faults go on for a while after the driver is done: deliveries, ticks and leases are still in flight.
  await systemClock.sleep(Math.max(0, started + MIN_CHAOS_MS - systemClock.now().getTime()));
  const actions = await chaos.stop();
  slack.clearFaults();
  problems.push(...driven.stuck);
  await checkRecovery(spec, replicas, server, actions, problems);

  o.logger.info({ scenario: spec.name, problems: problems.length }, 'driver done; settling');
  // Let in-flight work land: leases of killed replicas run out (60 s), retries back off.
  const settledAt = await settle(db, SETTLE_TIMEOUT_MS);
  if (!settledAt) problems.push(`not settled after ${SETTLE_TIMEOUT_MS / 1000}s`);
  // Slow answers still on their way must be counted.
  await systemClock.sleep(spec.slackFaults ? 11_000 : 500);

  if (spec.revokedToken) {
    if (actions.revoked === 0) problems.push('the token was never refused: the scenario tested nothing');
    const held = await db.selectFrom('destinationOutages').select('destination').execute();
    if (held.length > 0) problems.push(`still held after the token works again: ${held.map((h) => h.destination).join(', ')}`);
  }

  const longestStall = await stalls.stop();
  await probe?.stop();
  if (spec.databaseFaults && longestStall.seconds > STALL_LIMIT_SECONDS) {
    problems.push(`longest stall ${longestStall.seconds.toFixed(1)}s (${longestStall.what}: ${longestStall.ref ?? '?'}) while the database was up: over ${STALL_LIMIT_SECONDS}s`);
  }
  await dumpEvidence(spec.name, db, slack);
  // The bot keeps running while it is audited: an alert still open may escalate meanwhile. The audit covers
  // the notifications written until it settled (all of them when it never did), not one written a second ago.
  const verdict = await verifyScenario(db, slack, workload, launchLog, settledAt ?? systemClock.now());
  // A refused token holds the workspace (docs/reliability.md): no scenario makes a row dead, that one included.
  if (verdict.dead > 0) problems.push(`${verdict.dead} notifications dead without a permanent error`);
  problems.push(...verdict.storyMismatches.slice(0, 5));

  await replicas.stop();
  await slack.close();
  await db.destroy();
  await adminQuery(admin, `drop database if exists ${database} with (force)`).catch(() => {});
  await admin.destroy();

  const described = describeActions(spec, o, { workload, driven, replicas, server, actions });
  return { name: spec.name, actions: described, verdict, problems, longestStall, seconds: (systemClock.now().getTime() - started) / 1000 };
}

/** After the faults stop: every replica is brought back, and a database-only scenario must not have needed a restart. */
async function checkRecovery(spec: ScenarioSpec, replicas: ReplicaSet, server: PostgresHandle, actions: ChaosActions, problems: string[]): Promise<void> {
  for (const r of replicas.replicas) if (!r.ready) await replicas.restart(r).catch((e: Error) => problems.push(e.message));
  if (!spec.databaseFaults) return;
  const exited = replicas.restarts;
  if (exited > 0) problems.push(`${exited} replica restarts during a database-only scenario: loops must recover without one`);
  if (server.restartable && actions.readyzOutage < actions.readyzChecks) problems.push(`/readyz said ready during the outage on ${actions.readyzChecks - actions.readyzOutage} of ${actions.readyzChecks} checks`);
}

/** The Slack stand-in, paced like Slack; the on-call is in every tenant's channel (the App Home shows a viewer only the tenants whose channel they are in). */
async function startSlack(workload: Workload): Promise<RecordingSlackApi> {
  const slack = await RecordingSlackApi.start({ clock: systemClock, postMessageMinIntervalMs: 1000 });
  for (const t of workload.tenants) slack.channelMembers.set(t.channel, [ONCALL_USER]);
  return slack;
}

/** One line per kind of fault the scenario injected, for the report. */
function describeActions(
  spec: ScenarioSpec,
  o: ChaosOptions,
  r: { workload: Workload; driven: DriverStats; replicas: ReplicaSet; server: PostgresHandle; actions: ChaosActions },
): string[] {
  const { workload, driven, replicas, server, actions } = r;
  return [
    `${o.workflows}+${workload.scheduled.length} workflows`,
    `${driven.reports} reports, ${driven.clicks} clicks, ${driven.runNows} run-nows`,
    spec.kills && `${replicas.kills} kills/${replicas.restarts} restarts`,
    spec.slackFaults && `${actions.slackFaults} Slack faults`,
    spec.databaseFaults && `${actions.terminations} terminations (${actions.terminated} conns)`,
    spec.databaseFaults && (server.restartable ? `${actions.pgRestarts} pg restarts (readyz not ready ${actions.readyzOutage}/${actions.readyzChecks})` : 'no pg restart (external DATABASE_URL)'),
    spec.revokedToken && `token revoked >= ${REVOKED_MS / 1000}s (${actions.revoked} calls refused)`,
    '2 faulty launchers (hang, SIGKILL)',
  ].filter((x): x is string => !!x);
}
