import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';
import { AM_DEFAULTS, AM_TIGHTEST, alertmanagerBinary, alertmanagerVersion, freePort, killAllAlertmanagers, postAlerts, startAlertmanager, type AlertmanagerNode, type AlertmanagerTimers } from './lib/alertmanager.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase, type BenchDatabase } from './lib/postgres.js';
import { spawnReplica, type Replica } from './lib/replica.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { percentile, round, waitUntil } from './lib/stats.js';

/**
 * Benchmark 6: the alerting peer, end to end. From "a failure is reported"
 * to "the webhook receiver got the notification", on a loopback receiver in
 * this process (one clock for both ends):
 * - ours: a failed run reported over the API (POST /api/v1/runs, admin
 *   token) to a whole replica → the platform webhook destination;
 * - Alertmanager: the alert POSTed to its API (/api/v2/alerts) → its webhook
 *   receiver, at its documented route defaults and at its tightest timers.
 * Then the same stream against two replicas of ours and a two-node
 * Alertmanager cluster on loopback, one node SIGKILLed mid-stream and
 * restarted: notifications duplicated and lost, for each. Alerts go to both
 * Alertmanager nodes, as Prometheus sends them; reports go to one replica of
 * ours at a time, to the other when it refuses (a load balancer's retry).
 * Every failure is a different workflow (its own Alertmanager group), spaced
 * so that neither side's pacing toward one receiver is what is measured.
 */
const NAME = 'failure-to-webhook vs Alertmanager';
const SIZES = {
  smoke: { alerts: 10, spacingMs: 200, defaults: false },
  quick: { alerts: 100, spacingMs: 200, defaults: true },
  full: { alerts: 300, spacingMs: 200, defaults: true },
};
const API_TOKEN = 'bench-admin-token-0123456789';
const WEBHOOK_SECRET = 'bench-webhook-secret-0123456789';
/** Ours re-sends a row whose sender died when its lease (60 s) runs out; wait past it before counting losses. */
const OURS_SETTLE_MS = 90_000;

interface Hit {
  workflow: string;
  at: number;
}

export async function alertingPeer(ctx: BenchContext): Promise<Figure[]> {
  const { alerts, spacingMs, defaults } = SIZES[ctx.size];
  const bin = alertmanagerBinary();
  const receiver = await startReceiver();
  const dir = await mkdtemp(join(tmpdir(), 'bench-alertmanager-'));
  const out: Figure[] = [];
  try {
    const stream = { alerts, spacingMs, receiver: 'loopback HTTP, this process' };
    // Ours, one replica.
    const single = await withOurs(ctx, 'webhook', alerts, receiver.url('/ours'), async (ours) => {
      const [replica] = await ours.replicas(1);
      const sent = await streamOurs(ours, [replica!], alerts, spacingMs);
      await waitUntil(async () => firstArrivals(receiver.hits('/ours')).size >= alerts, 60_000, 50, 'ours delivered every alert').catch(async (error: Error) => {
        throw new Error(`${error.message}: received ${firstArrivals(receiver.hits('/ours')).size}/${alerts}; ${JSON.stringify(await outboxStates(ours.db))}\n${replica!.output().slice(-3000)}`);
      });
      return latencies(sent, receiver.hits('/ours'));
    });
    out.push(...latencyFigures('ours', single, { ...stream, replicas: 1, wakeups: 'LISTEN/NOTIFY', destination: 'webhook (PLATFORM_DESTINATIONS)' }, true));
    ctx.log(`  ${NAME}: ours p50 ${round(percentile(single, 50), 0)} ms`);
    if (!bin) {
      out.push(skipped('Alertmanager'));
    } else {
      const version = alertmanagerVersion(bin);
      const settings = defaults ? ([['defaults', AM_DEFAULTS], ['tightest', AM_TIGHTEST]] as const) : ([['tightest', AM_TIGHTEST]] as const);
      let tightestP50 = NaN;
      for (const [label, timers] of settings) {
        const path = `/am-${label}`;
        const node = await startAlertmanager({ bin, dir, name: label, webhookUrl: receiver.url(path), timers, webPort: await freePort() });
        try {
          const sent = await streamAlertmanager([node], alerts, spacingMs);
          await waitUntil(async () => firstArrivals(receiver.hits(path)).size >= alerts, 120_000, 50, `Alertmanager (${label}) notified every alert`);
          const values = latencies(sent, receiver.hits(path));
          if (label === 'tightest') tightestP50 = percentile(values, 50);
          out.push(...latencyFigures(`Alertmanager ${label}`, values, { ...stream, version, route: { group_by: ['...'], ...timers } }, false));
          ctx.log(`  ${NAME}: Alertmanager ${label} p50 ${round(percentile(values, 50), 0)} ms`);
        } finally {
          await node.kill();
        }
      }
      out.push(figure(NAME, 'ours p50 − Alertmanager tightest p50', round(percentile(single, 50) - tightestP50, 0), 'ms', { measured: 'same stream, same receiver, run one after the other' }, '<= 0'));
    }
    // Two replicas of ours, one SIGKILLed mid-stream and restarted.
    const oursKill = await withOurs(ctx, 'kill', alerts, receiver.url('/ours-kill'), async (ours) => {
      const replicas = await ours.replicas(2);
      const sent = await streamOurs(ours, replicas, alerts, spacingMs, { killAt: Math.floor(alerts / 2), downMs: 2_000 });
      // Settled: every alert delivered, nothing pending or leased in the outbox, and past the lease of whatever the dead replica held.
      const start = performance.now();
      await waitUntil(async () => firstArrivals(receiver.hits('/ours-kill')).size >= alerts && (await openOutbox(ours.db)) === 0, OURS_SETTLE_MS, 100, 'ours delivered every alert').catch(() => {});
      const rest = OURS_SETTLE_MS - (performance.now() - start);
      if (ctx.size !== 'smoke' && rest > 0) await new Promise((r) => setTimeout(r, Math.min(rest, 65_000)));
      return count(sent.keys(), receiver.hits('/ours-kill'));
    });
    out.push(...killFigures('ours', oursKill, { ...stream, replicas: 2, killed: 'replica 1 at the middle of the stream, restarted 2 s later', settleMs: OURS_SETTLE_MS }));
    ctx.log(`  ${NAME}: ours under a kill: ${oursKill.duplicates} duplicated, ${oursKill.lost} lost`);
    if (bin) {
      const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      const nodes: AlertmanagerNode[] = [];
      try {
        for (let i = 0; i < 2; i++) {
          nodes.push(
            await startAlertmanager({ bin, dir, name: `cluster-${i}`, webhookUrl: receiver.url('/am-cluster'), timers: AM_TIGHTEST, webPort: ports[i]!, cluster: { port: ports[2 + i]!, peers: [ports[2 + (1 - i)]!] } }),
          );
        }
        await waitUntil(async () => (await clusterSize(nodes[0]!.url)) === 2 && (await clusterSize(nodes[1]!.url)) === 2, 60_000, 100, 'the two Alertmanager nodes see each other');
        const sent = await streamAlertmanager(nodes, alerts, spacingMs, { killAt: Math.floor(alerts / 2), downMs: 2_000 });
        // A node notifies what its peer did not after peer_timeout (15 s) × its position: wait past both.
        await waitUntil(async () => firstArrivals(receiver.hits('/am-cluster')).size >= alerts, 60_000, 100, 'cluster notified every alert').catch(() => {});
        await new Promise((r) => setTimeout(r, ctx.size === 'smoke' ? 16_000 : 35_000));
        const result = count(sent.keys(), receiver.hits('/am-cluster'));
        out.push(...killFigures('Alertmanager cluster', result, { ...stream, nodes: 2, route: { group_by: ['...'], ...AM_TIGHTEST }, peerTimeout: '15s (default)', killed: 'node 0 at the middle of the stream, restarted 2 s later with the same storage' }));
        ctx.log(`  ${NAME}: Alertmanager cluster under a kill: ${result.duplicates} duplicated, ${result.lost} lost`);
      } finally {
        await Promise.all(nodes.map((n) => n.kill()));
      }
    } else {
      out.push(skipped('Alertmanager cluster'));
    }
    return out;
  } finally {
    await killAllAlertmanagers();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function skipped(what: string): Figure {
  return figure(NAME, `${what}: skipped: not installed`, 0, '(none)', { skipped: 'not installed', install: 'sudo apt-get install -y prometheus-alertmanager (Debian/Ubuntu), or ALERTMANAGER_BIN=/path/to/alertmanager' });
}

function latencyFigures(who: string, values: number[], parameters: Record<string, unknown>, ours: boolean): Figure[] {
  return [
    figure(NAME, `${who} p50`, round(percentile(values, 50), 0), 'ms', { ...parameters, samples: values.length }),
    figure(NAME, `${who} p99`, round(percentile(values, 99), 0), 'ms', { ...parameters, samples: values.length }, ours ? '< 1000' : undefined),
  ];
}

function killFigures(who: string, c: { duplicates: number; lost: number; deliveries: number }, parameters: Record<string, unknown>): Figure[] {
  const ours = who === 'ours';
  return [
    figure(NAME, `${who} under a node kill: duplicated`, c.duplicates, 'notifications', { ...parameters, deliveries: c.deliveries }, ours ? '<= 0' : undefined),
    figure(NAME, `${who} under a node kill: lost`, c.lost, 'notifications', { ...parameters, deliveries: c.deliveries }, ours ? '<= 0' : undefined),
  ];
}

/** Sent-at (monotonic ms) per workflow → latency of its first delivery; an undelivered one counts as missing, not as fast. */
function latencies(sent: Map<string, number>, hits: Hit[]): number[] {
  const first = firstArrivals(hits);
  return [...sent].map(([workflow, at]) => (first.get(workflow) ?? Infinity) - at);
}

function firstArrivals(hits: Hit[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of hits) if (!out.has(h.workflow)) out.set(h.workflow, h.at);
  return out;
}

function count(workflows: Iterable<string>, hits: Hit[]): { duplicates: number; lost: number; deliveries: number } {
  const per = new Map<string, number>();
  for (const h of hits) per.set(h.workflow, (per.get(h.workflow) ?? 0) + 1);
  let duplicates = 0;
  let lost = 0;
  for (const w of workflows) {
    const n = per.get(w) ?? 0;
    if (n === 0) lost++;
    else duplicates += n - 1;
  }
  return { duplicates, lost, deliveries: hits.length };
}

interface Receiver {
  url(path: string): string;
  hits(path: string): Hit[];
  close(): Promise<void>;
}

/** One webhook receiver for both: ours sends one event per request (workflow.name), Alertmanager a group of alerts (labels.workflow). */
async function startReceiver(): Promise<Receiver> {
  const hits = new Map<string, Hit[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const path = req.url ?? '/';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { event?: string; workflow?: { name: string }; alerts?: { labels: Record<string, string> }[] };
        const list = hits.get(path) ?? [];
        if (body.alerts) for (const a of body.alerts) list.push({ workflow: a.labels.workflow!, at });
        else if (body.workflow && body.event === 'opened') list.push({ workflow: body.workflow.name, at });
        hits.set(path, list);
        res.writeHead(200).end('ok');
      } catch {
        res.writeHead(400).end('bad json');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits: (path) => hits.get(path) ?? [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Ours {
  db: Db;
  names: string[];
  replicas(n: number): Promise<Replica[]>;
  spawn(): Promise<Replica>;
}

/** A fresh database with one workflow per alert (alerting on the first failure), and replicas whose only destination is the webhook. */
async function withOurs<T>(ctx: BenchContext, label: string, alerts: number, webhookUrl: string, body: (ours: Ours) => Promise<T>): Promise<T> {
  const database: BenchDatabase = await freshDatabase(ctx.adminUrl, `alerting_${label}`);
  const started: Replica[] = [];
  try {
    await seedTenants(database.db, 10, () => null);
    await seedWorkflows(database.db, { count: alerts, tenants: 10, policy: { alertAfter: 1, retries: 0 } });
    const { rows } = await sql<{ name: string }>`select name from workflows order by id`.execute(database.db);
    const env = {
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      API_TOKEN,
      PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'webhook', url: webhookUrl, secret: WEBHOOK_SECRET }]),
    };
    let n = 0;
    const spawn = async () => {
      const replica = spawnReplica('app', { ...env, REPLICA_ID: `bench-alerting-${n++}` });
      started.push(replica);
      await replica.ready;
      return replica;
    };
    const ours: Ours = { db: database.db, names: rows.map((r) => r.name), spawn, replicas: (k) => Promise.all(Array.from({ length: k }, spawn)) };
    return await body(ours);
  } finally {
    await Promise.all(started.map((r) => r.stop().catch(() => r.kill())));
    await database.drop();
  }
}

/** Reports each workflow's failure in turn, `spacingMs` apart; returns when each report was sent. With killAt, SIGKILLs replica 0 there and restarts it downMs later. */
async function streamOurs(ours: Ours, replicas: Replica[], alerts: number, spacingMs: number, kill?: { killAt: number; downMs: number }): Promise<Map<string, number>> {
  const pool = await Promise.all(replicas.map(async (r) => ({ replica: r, port: (await r.info).port! })));
  // The LISTEN connections open after start-up; give them a moment before the first NOTIFY.
  await new Promise((r) => setTimeout(r, 1000));
  const sent = new Map<string, number>();
  let restarting: Promise<void> | undefined;
  const t0 = performance.now();
  for (let i = 0; i < alerts; i++) {
    const wait = t0 + i * spacingMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (kill && i === kill.killAt) {
      const victim = pool.shift()!;
      await victim.replica.kill();
      restarting = new Promise<void>((r) => setTimeout(r, kill.downMs)).then(async () => {
        const replica = await ours.spawn();
        pool.push({ replica, port: (await replica.info).port! });
      });
    }
    const name = ours.names[i]!;
    const tenant = `bench-${i % 10}`;
    sent.set(name, performance.now());
    let reported = false;
    for (let attempt = 0; attempt < pool.length * 2 && !reported; attempt++) {
      const target = pool[(i + attempt) % pool.length]!;
      reported = await reportFailure(target.port, tenant, name);
    }
    if (!reported) throw new Error(`no replica took the report for ${tenant}/${name}`);
  }
  await restarting;
  return sent;
}

async function reportFailure(port: number, tenant: string, workflow: string): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
      // The schedule's latest fire time (every workflow is */5): a run without a tick would be a manual one, which opens nothing.
      body: JSON.stringify({ tenant, workflow, status: 'failed', tick: new Date(Math.floor(Date.now() / 300_000) * 300_000).toISOString(), error: 'connection to db-1 refused' }),
    });
    if (res.status >= 500) return false;
    if (!res.ok) throw new Error(`report for ${tenant}/${workflow} refused: ${res.status} ${await res.text()}`);
    return true;
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('report for')) throw error;
    return false;
  }
}

/** Posts each alert to every node, `spacingMs` apart; with killAt, SIGKILLs node 0 there and restarts it downMs later. */
async function streamAlertmanager(nodes: AlertmanagerNode[], alerts: number, spacingMs: number, kill?: { killAt: number; downMs: number }): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  let restarting: Promise<void> | undefined;
  const t0 = performance.now();
  for (let i = 0; i < alerts; i++) {
    const wait = t0 + i * spacingMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (kill && i === kill.killAt) {
      await nodes[0]!.kill();
      restarting = new Promise<void>((r) => setTimeout(r, kill.downMs)).then(() => nodes[0]!.restart());
    }
    const workflow = `wf-${i + 1}`;
    sent.set(workflow, performance.now());
    const accepted = await Promise.all(nodes.map((n) => postAlerts(n.url, [{ labels: { alertname: 'WorkflowFailed', tenant: `bench-${i % 10}`, workflow }, annotations: { summary: 'connection to db-1 refused' } }])));
    if (!accepted.some(Boolean)) throw new Error(`no Alertmanager node took alert ${workflow}`);
  }
  await restarting;
  return sent;
}

async function clusterSize(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/api/v2/status`);
    const body = (await res.json()) as { cluster?: { peers?: unknown[] } };
    return body.cluster?.peers?.length ?? 0;
  } catch {
    return 0;
  }
}

async function openOutbox(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from notifications where status in ('pending', 'sending', 'held')`.execute(db);
  return rows[0]!.n;
}

async function outboxStates(db: Db): Promise<Record<string, unknown>> {
  const runs = await sql<{ status: string; processed: boolean; n: number }>`select status, processed_at is not null as processed, count(*)::int as n from runs group by 1, 2`.execute(db);
  const rows = await sql<{ status: string; destination: string; n: number }>`select status, destination, count(*)::int as n from notifications group by 1, 2`.execute(db);
  const events = await sql<{ kind: string; n: number }>`select kind, count(*)::int as n from alert_events group by 1`.execute(db);
  return { runs: runs.rows, notifications: rows.rows, events: events.rows };
}
