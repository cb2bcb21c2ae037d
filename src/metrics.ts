/**
 * A small Prometheus registry for in-process counters and histograms (Slack
 * calls by result, loop tick durations). Figures that live in the database
 * (runs by status, open alerts, outbox depth) are read at scrape time instead.
 */
type Labels = Record<string, string>;

const key = (labels: Labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');

export class Counter {
  private values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = key(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(key(labels)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${v}`);
    return lines.join('\n');
  }
}

export class Histogram {
  private series = new Map<string, { buckets: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  ) {}
  observe(value: number, labels: Labels = {}): void {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { buckets: this.bounds.map(() => 0), sum: 0, count: 0 }));
    this.bounds.forEach((b, i) => {
      if (value <= b) s!.buckets[i]!++;
    });
    s.sum += value;
    s.count++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : '';
      this.bounds.forEach((b, i) => lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.buckets[i]}`));
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${s.sum}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
    }
    return lines.join('\n');
  }
}

/** The process's registry. One per process is right: replicas are processes. */
export const metrics = {
  slackCalls: new Counter('scheduler_slack_calls_total', 'Slack Web API calls by method and result'),
  deliveries: new Counter('scheduler_deliveries_total', 'Outbox deliveries by destination kind and result'),
  loopTickSeconds: new Histogram('scheduler_loop_tick_seconds', 'Duration of one loop tick'),
  loopErrors: new Counter('scheduler_loop_errors_total', 'Loop ticks that threw'),
  pings: new Counter('scheduler_pings_total', 'Pings received by signal and result'),
};

export function renderRegistry(): string {
  return Object.values(metrics)
    .map((m) => m.render())
    .join('\n');
}

/** A gauge read at scrape time (figures that live in the database), rendered in the text format. */
export function renderGauge(name: string, help: string, samples: { labels?: Labels; value: number }[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
  for (const s of samples) {
    const k = key(s.labels ?? {});
    lines.push(`${name}${k ? `{${k}}` : ''} ${s.value}`);
  }
  return lines.join('\n');
}
