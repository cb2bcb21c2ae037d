import { collectDefaultMetrics, Counter, Gauge, Histogram, type Metric, Registry } from 'prom-client';

/**
 * The process's own counters and histograms (Slack calls by result, loop
 * tick durations, loop errors), kept with prom-client. They are created on no
 * registry: each app builds a Registry of its own (`createAppRegistry`) that
 * exposes them beside its process metrics and its database figures, so
 * several apps in one process (tests) never clash on the global registry.
 * Figures that live in the database (runs by status, open alerts, outbox
 * depth) are read at scrape time (src/http/metrics-route.ts).
 */
export const metrics = {
  slackCalls: new Counter({ name: 'scheduler_slack_calls_total', help: 'Slack Web API calls by method and result', labelNames: ['method', 'result'] as const, registers: [] }),
  deliveries: new Counter({ name: 'scheduler_deliveries_total', help: 'Outbox deliveries by destination kind and result', labelNames: ['kind', 'result'] as const, registers: [] }),
  loopTickSeconds: new Histogram({
    name: 'scheduler_loop_tick_seconds',
    help: 'Duration of one loop tick',
    labelNames: ['loop'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [],
  }),
  loopErrors: new Counter({ name: 'scheduler_loop_errors_total', help: 'Loop ticks that threw', labelNames: ['loop'] as const, registers: [] }),
  loopDbErrors: new Counter({
    name: 'scheduler_loop_db_errors_total',
    help: 'Loop ticks that threw because the database failed (connection lost or refused, timed out)',
    labelNames: ['loop'] as const,
    registers: [],
  }),
  clockOffset: new Gauge({
    name: 'scheduler_clock_offset_seconds',
    help: "This replica's clock minus the database's, measured at each uptime heartbeat (positive: ahead); beyond 5 s the replica logs an error",
    registers: [],
  }),
  pings: new Counter({ name: 'scheduler_pings_total', help: 'Pings received by signal and result', labelNames: ['signal', 'result'] as const, registers: [] }),
  reportEvaluations: new Counter({
    name: 'scheduler_report_evaluations_total',
    help: 'Reported run ends (API, pings) by where they were evaluated: with_report, left_to_pollers (the workflow or an upstream was held, or a burst), failed (the evaluation threw; the pollers took it)',
    labelNames: ['result'] as const,
    registers: [],
  }),
};

/** A counter's current value for these labels (0 when never counted): for tests and tools. */
export async function counterValue<L extends string>(counter: Counter<L>, labels: Partial<Record<L, string>>): Promise<number> {
  const { values } = await counter.get();
  const keys = Object.keys(labels) as L[];
  const match = values.find((v) => keys.every((k) => v.labels[k] === labels[k]) && Object.keys(v.labels).length === keys.length);
  return match?.value ?? 0;
}

/**
 * A fresh registry for one app: the process's counters above, prom-client's
 * default process metrics (CPU, memory, event-loop lag, GC, handles), and
 * whatever gauges the caller registers on it.
 */
export function createAppRegistry(): Registry {
  const registry = new Registry();
  for (const metric of Object.values(metrics) as Metric[]) registry.registerMetric(metric);
  collectDefaultMetrics({ register: registry });
  return registry;
}

export { Gauge, type Registry };
