import type { RequestHandler } from 'express';
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { renderGauge, renderRegistry } from '../metrics.js';

import type { RunStatus, Severity } from '../db/schema.js';

const RUN_STATUSES: RunStatus[] = ['running', 'pending_retry', 'succeeded', 'failed', 'missed', 'skipped'];
const SEVERITIES: Severity[] = ['warning', 'critical'];

/**
 * The database's figures, read at scrape time so every replica reports the
 * same truth; then this process's own counters and histograms.
 */
export async function renderMetrics(deps: Pick<Deps, 'db' | 'clock'>): Promise<string> {
  const now = deps.clock.now();
  const age = (oldest: Date | string | null | undefined) => (oldest ? Math.max(0, (now.getTime() - new Date(oldest).getTime()) / 1000) : 0);

  const runs = await deps.db.selectFrom('runs').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
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
    .select([sql<string>`split_part(destination, ':', 1)`.as('kind'), (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('failingSince').as('oldest')])
    .groupBy(sql`split_part(destination, ':', 1)`)
    .execute();
  const runsBy = new Map(runs.map((r) => [r.status, Number(r.n)]));
  const alertsBy = new Map(alerts.map((a) => [a.severity, Number(a.n)]));
  return [
    renderGauge('scheduler_runs', 'Runs in the ledger by status', RUN_STATUSES.map((status) => ({ labels: { status }, value: runsBy.get(status) ?? 0 }))),
    renderGauge('scheduler_poll_lag_seconds', 'Age of the oldest finished run not yet processed by a poller', [{ value: age(lag?.oldest) }]),
    renderGauge('scheduler_open_alerts', 'Open alerts by severity', SEVERITIES.map((severity) => ({ labels: { severity }, value: alertsBy.get(severity) ?? 0 }))),
    renderGauge('scheduler_outbox_depth', 'Notifications waiting to be delivered (pending or being sent)', [{ value: Number(outbox?.n ?? 0) }]),
    renderGauge('scheduler_outbox_oldest_pending_seconds', 'Age of the oldest notification waiting to be delivered', [{ value: age(outbox?.oldest) }]),
    renderGauge('scheduler_outbox_dead', 'Notifications that will not be delivered (shown on the App Home), by destination kind', dead.map((d) => ({ labels: { kind: d.kind }, value: Number(d.n) }))),
    renderGauge('scheduler_destinations_failing', 'Destinations held after transient delivery failures (their notifications wait and go out in order on recovery), by kind', outages.map((o) => ({ labels: { kind: o.kind }, value: Number(o.n) }))),
    renderGauge('scheduler_destination_outage_seconds', 'How long the longest-failing destination of each kind has been failing', outages.map((o) => ({ labels: { kind: o.kind }, value: age(o.oldest) }))),
    renderRegistry(),
  ].join('\n') + '\n';
}

export function metricsHandler(deps: Pick<Deps, 'db' | 'clock'>): RequestHandler {
  return async (_req, res) => {
    res.type('text/plain; version=0.0.4').send(await renderMetrics(deps));
  };
}
