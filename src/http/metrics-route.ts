import type { RequestHandler } from 'express';
import { sql } from 'kysely';
import type { Config } from '../config/env.js';
import type { Deps } from '../deps.js';
import { bearerToken, oneOfTokens } from './auth.js';
import type { LoopStatus } from '../engine/runner.js';
import { createAppRegistry, Gauge, type Registry } from '../metrics.js';
import { UPTIME_SLACK_MS } from '../engine/uptime.js';

import type { Severity } from '../db/schema.js';
import { countRunsByStatus, EXACT_RUN_COUNT_BELOW, RUN_STATUSES } from '../ledger/run-counts.js';

const SEVERITIES: Severity[] = ['warning', 'critical'];

type MetricsDeps = Pick<Deps, 'db' | 'clock'>;

/**
 * One app's /metrics: a prom-client Registry of its own holding the
 * database's figures (read at scrape time, so every replica reports the same
 * truth), each loop's liveness, this process's counters and histograms, and
 * prom-client's default process metrics. When the database does not answer,
 * the scrape still succeeds: `scheduler_database_up` is 0 and the database
 * figures are left out rather than reported stale. Every figure is read
 * through an index holding only what it counts (in flight, open, pending,
 * dead) or from the catalogue's statistics, so a scrape costs the same on a
 * ledger of a thousand runs and of a billion (bench/ledger-growth.ts).
 */
export function createMetrics(deps: MetricsDeps, loops: () => LoopStatus[] = () => []): { registry: Registry; render(): Promise<string> } {
  const registry = createAppRegistry();
  const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) => new Gauge<L>({ name, help, labelNames, registers: [registry] });
  const runs = gauge(
    'scheduler_runs',
    `Runs in the ledger by status: running and pending_retry counted exactly; the settled statuses counted exactly below ${EXACT_RUN_COUNT_BELOW} runs, estimated from PostgreSQL's statistics above`,
    ['status'],
  );
  const lag = gauge('scheduler_poll_lag_seconds', 'Age of the oldest finished run not yet processed by a poller');
  const openAlerts = gauge('scheduler_open_alerts', 'Open alerts by severity', ['severity']);
  const depth = gauge('scheduler_outbox_depth', 'Notifications waiting to be delivered (pending or being sent)');
  const oldest = gauge('scheduler_outbox_oldest_pending_seconds', 'Age of the oldest notification waiting to be delivered');
  const dead = gauge('scheduler_outbox_dead', 'Notifications that will not be delivered (shown on the App Home), by destination kind', ['kind']);
  const failing = gauge(
    'scheduler_destinations_failing',
    'Destinations held after transient delivery failures or refused credentials (their notifications wait and go out in order on recovery), by kind; the Slack workspace held for a refused token counts once',
    ['kind'],
  );
  const refused = gauge('scheduler_destination_credentials_refused', "Destinations (or, for Slack, the workspace) held because they refuse the bot's credentials: a revoked token, a 401/403; by kind", ['kind']);
  const held = gauge('scheduler_outbox_held', 'Notifications waiting behind a held destination (an outage or refused credentials), by destination kind', ['kind']);
  const outageSeconds = gauge('scheduler_destination_outage_seconds', 'How long the longest-failing destination of each kind has been failing', ['kind']);
  const replicas = gauge('scheduler_replicas_alive', `Replicas whose uptime heartbeat the database saw in the last ${UPTIME_SLACK_MS / 1000} s (monitor_uptime): the same figure on every replica`);
  const databaseUp = gauge('scheduler_database_up', '1 when the database answered this scrape, 0 when it did not');
  const sinceTick = gauge('scheduler_loop_seconds_since_tick', 'Seconds since each loop last finished a tick without an error (since start when it has not yet)', ['loop']);
  const interval = gauge('scheduler_loop_interval_seconds', "Each loop's interval between idle ticks (a housekeeping job's longest gap between firings): compare scheduler_loop_seconds_since_tick with it", ['loop']);
  const loopFailures = gauge('scheduler_loop_consecutive_failures', 'Ticks in a row that threw, per loop (0 once one succeeds)', ['loop']);
  const startedAt = deps.clock.now().getTime();
  const dbGauges = [runs, lag, openAlerts, depth, oldest, dead, failing, outageSeconds, refused, held, replicas];

  async function render(): Promise<string> {
    const now = deps.clock.now();
    for (const l of loops()) {
      sinceTick.set({ loop: l.name }, Math.max(0, (now.getTime() - (l.lastTickAt?.getTime() ?? startedAt)) / 1000));
      loopFailures.set({ loop: l.name }, l.failures);
      interval.set({ loop: l.name }, l.intervalMs / 1000);
    }
    for (const g of dbGauges) g.reset();
    try {
      const figures = await withinScrapeLimit(readFigures(deps, now));
      for (const status of RUN_STATUSES) runs.set({ status }, figures.runsBy.get(status) ?? 0);
      lag.set(figures.lag);
      for (const severity of SEVERITIES) openAlerts.set({ severity }, figures.alertsBy.get(severity) ?? 0);
      depth.set(figures.depth);
      oldest.set(figures.oldest);
      for (const d of figures.dead) dead.set({ kind: d.kind }, d.n);
      for (const o of figures.outages) {
        failing.set({ kind: o.kind }, o.n);
        outageSeconds.set({ kind: o.kind }, o.seconds);
        refused.set({ kind: o.kind }, o.credentials);
      }
      for (const h of figures.held) held.set({ kind: h.kind }, h.n);
      replicas.set(figures.replicas);
      databaseUp.set(1);
    } catch {
      databaseUp.set(0);
    }
    return registry.metrics();
  }
  return { registry, render };
}

/**
 * How long a scrape waits for the database's figures. A database that hangs
 * (a frozen server, a black-holed route) held the scrape for the connect
 * timeout (5 s) or the query timeout (35 s), past Prometheus's default
 * scrape_timeout of 10 s: the whole target went down instead of
 * `scheduler_database_up` saying 0.
 */
export const METRICS_DB_TIMEOUT_MS = 3_000;

function withinScrapeLimit<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer the scrape within ${METRICS_DB_TIMEOUT_MS / 1000} s`)), METRICS_DB_TIMEOUT_MS);
  });
  work.catch(() => {});
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

async function readFigures(deps: MetricsDeps, now: Date) {
  const age = (at: Date | string | null | undefined) => (at ? Math.max(0, (now.getTime() - new Date(at).getTime()) / 1000) : 0);
  const runs = await countRunsByStatus(deps.db);
  const lag = await deps.db
    .selectFrom('runs')
    .select((eb) => eb.fn.min('finishedAt').as('oldest'))
    .where('processedAt', 'is', null)
    .where('status', 'in', ['succeeded', 'failed', 'missed'])
    .executeTakeFirst();
  const alerts = await deps.db.selectFrom('alerts').select(['severity', (eb) => eb.fn.countAll<number>().as('n')]).where('status', '=', 'open').groupBy('severity').execute();
  const outbox = await deps.db
    .selectFrom('notifications')
    .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('createdAt').as('oldest')])
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirst();
  const dead = await deps.db
    .selectFrom('notifications')
    .select([sql<string>`split_part(destination, ':', 1)`.as('kind'), (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', '=', 'dead')
    .groupBy(sql`split_part(destination, ':', 1)`)
    .execute();
  // Only the destination's kind is a label: a destination's name is tenant data, and its URL a secret.
  const outages = await deps.db
    .selectFrom('destinationOutages')
    .select([
      sql<string>`split_part(destination, ':', 1)`.as('kind'),
      (eb) => eb.fn.countAll<number>().as('n'),
      sql<number>`count(*) filter (where cause = 'credentials')`.as('credentials'),
      (eb) => eb.fn.min('failingSince').as('oldest'),
    ])
    .groupBy(sql`split_part(destination, ':', 1)`)
    .execute();
  // Rows of a held destination, or of a kind held whole (`slack:*`, src/notify/claim-notifications.ts): read through the pending index, and only while something is held.
  const held =
    outages.length === 0
      ? []
      : await sql<{ kind: string; n: number }>`
          select split_part(n.destination, ':', 1) as kind, count(*)::int as n from notifications n
          where n.status in ('pending', 'sending')
            and exists (select 1 from destination_outages h where h.destination in (n.destination, split_part(n.destination, ':', 1) || ':*'))
          group by 1`
          .execute(deps.db)
          .then((r) => r.rows);
  // Through monitor_uptime_span (last_seen_at first): one row per replica process, the live ones at its end.
  const alive = await deps.db
    .selectFrom('monitorUptime')
    .select((eb) => eb.fn.count<number>('replicaId').distinct().as('n'))
    .where('lastSeenAt', '>=', new Date(now.getTime() - UPTIME_SLACK_MS))
    .executeTakeFirst();
  return {
    replicas: Number(alive?.n ?? 0),
    outages: outages.map((o) => ({ kind: o.kind, n: Number(o.n), seconds: age(o.oldest), credentials: Number(o.credentials) })),
    held: held.map((h) => ({ kind: h.kind, n: Number(h.n) })),
    runsBy: runs.byStatus,
    lag: age(lag?.oldest),
    alertsBy: new Map(alerts.map((a) => [a.severity, Number(a.n)])),
    depth: Number(outbox?.n ?? 0),
    oldest: age(outbox?.oldest),
    dead: dead.map((d) => ({ kind: d.kind, n: Number(d.n) })),
  };
}

/** The metrics text for `deps` with a registry of its own (tests, tools). */
export async function renderMetrics(deps: MetricsDeps, loops?: () => LoopStatus[]): Promise<string> {
  return createMetrics(deps, loops).render();
}

export function metricsHandler(metrics: ReturnType<typeof createMetrics>, config: Pick<Config, 'METRICS_TOKEN' | 'API_TOKEN'>): RequestHandler {
  return async (req, res) => {
    const refusal = metricsRefusal(config, req.get('authorization'));
    if (refusal) {
      res.set('WWW-Authenticate', 'Bearer realm="metrics"').status(401).json({ error: 'unauthorized', message: refusal });
      return;
    }
    const text = await metrics.render();
    res.type(metrics.registry.contentType).send(text);
  };
}

/**
 * With METRICS_TOKEN set, a scrape must carry it (or the admin token) as a
 * Bearer token; without, /metrics is open, as Prometheus exporters are by
 * default.
 */
function metricsRefusal(config: Pick<Config, 'METRICS_TOKEN' | 'API_TOKEN'>, header: string | undefined): string | undefined {
  if (!config.METRICS_TOKEN) return undefined;
  const token = bearerToken(header);
  if (token === undefined) return 'missing "Authorization: Bearer <token>" header (METRICS_TOKEN is set)';
  return oneOfTokens(token, [config.METRICS_TOKEN, config.API_TOKEN]) ? undefined : 'invalid token';
}
