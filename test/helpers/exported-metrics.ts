import { ManualClock } from '../../src/clock.js';
import { createMetrics } from '../../src/http/metrics-route.js';

export interface ExportedMetric {
  type: string;
  labels: string[];
}

/**
 * Every metric one app's /metrics exports, by name, with its label names:
 * from the registry itself (nothing is rendered, so no database is asked).
 */
export async function exportedMetrics(): Promise<Map<string, ExportedMetric>> {
  const { registry } = createMetrics({ db: undefined as never, clock: new ManualClock('2026-03-10T00:00:00Z') });
  const out = new Map<string, ExportedMetric>();
  for (const m of await registry.getMetricsAsJSON()) {
    const labels = (registry.getSingleMetric(m.name) as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    out.set(m.name, { type: String(m.type), labels: [...labels] });
  }
  return out;
}

/** The series names a metric exposes: a histogram's `_bucket`, `_sum` and `_count`, else its own name. */
export function seriesNames(name: string, metric: ExportedMetric): string[] {
  return metric.type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
}
