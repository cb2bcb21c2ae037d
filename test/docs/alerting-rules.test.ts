import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { exportedMetrics, seriesNames, type ExportedMetric } from '../helpers/exported-metrics.js';

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];
/** Series Prometheus makes itself, with their labels. */
const PROMETHEUS_OWN: Record<string, string[]> = { up: [] };
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset']);

/** The rule file in docs/operations.md's "Alerting rules": each rule's alert name and expression. */
function documentedRules(): { alert: string; expr: string }[] {
  const page = readFileSync('docs/operations.md', 'utf8');
  const section = page.split(/^## Alerting rules$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const rules = [...block.matchAll(/- alert: (\S+)\n\s+expr: (.+)\n/g)].map((m) => ({ alert: m[1]!, expr: m[2]! }));
  // Each rule's expression on the line after its name, on one line: none is left unchecked.
  expect(rules.length).toBe(block.match(/- alert:/g)?.length ?? 0);
  return rules;
}

/** What an expression names: series with the labels matched on each, and the labels it groups or matches by. */
function namedIn(expr: string): { series: { name: string; labels: string[] }[]; grouping: string[] } {
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const series: { name: string; labels: string[] }[] = [];
  const grouping: string[] = [];
  let rest = noStrings.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g, (_, name: string, matchers: string) => {
    series.push({ name, labels: [...matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]!) });
    return ' ';
  });
  rest = rest.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, labels: string) => {
    grouping.push(...labels.split(',').map((l) => l.trim()).filter(Boolean));
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  for (const m of rest.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1]!)) continue; // a function or an aggregation, or a keyword
    series.push({ name: m[1]!, labels: [] });
  }
  return { series, grouping };
}

describe('docs/operations.md alerting rules', () => {
  let exported: Map<string, ExportedMetric>;
  let labelsOf: Map<string, string[]>;
  beforeAll(async () => {
    exported = await exportedMetrics();
    labelsOf = new Map([...exported].flatMap(([name, m]) => seriesNames(name, m).map((s) => [s, m.type === 'histogram' && s.endsWith('_bucket') ? [...m.labels, 'le'] : m.labels] as const)));
    for (const [name, labels] of Object.entries(PROMETHEUS_OWN)) labelsOf.set(name, labels);
  });

  it('has a rule for a stale outbox, a stalled loop, a failing destination and missing replicas', () => {
    const rules = documentedRules();
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(['SchedulerBotOutboxBacklogOld', 'SchedulerBotLoopStalled', 'SchedulerBotDestinationFailing', 'SchedulerBotReplicasMissing']));
  });

  it('names only series the bot (or Prometheus) exports, and only labels those series carry', () => {
    const problems = documentedRules().flatMap(({ alert, expr }) => {
      const { series, grouping } = namedIn(expr);
      const unknown = series.filter((s) => !labelsOf.has(s.name)).map((s) => `${alert}: no metric ${s.name}`);
      const known = series.filter((s) => labelsOf.has(s.name));
      const badLabels = known.flatMap((s) => s.labels.filter((l) => !labelsOf.get(s.name)!.includes(l) && !TARGET_LABELS.includes(l)).map((l) => `${alert}: ${s.name} has no label ${l}`));
      const carried = new Set([...TARGET_LABELS, ...known.flatMap((s) => labelsOf.get(s.name)!)]);
      const badGrouping = grouping.filter((l) => !carried.has(l)).map((l) => `${alert}: no series here carries ${l}`);
      return [...unknown, ...badLabels, ...badGrouping];
    });
    expect(problems).toEqual([]);
  });

  it('the check itself catches a misspelled metric and a label a metric does not carry', () => {
    expect(namedIn('max by (kind) (scheduler_outbox_oldest_pending_secs{tenant="x"}) > 1 unless on(instance) up == 0')).toEqual({
      series: [{ name: 'scheduler_outbox_oldest_pending_secs', labels: ['tenant'] }, { name: 'up', labels: [] }],
      grouping: ['kind', 'instance'],
    });
  });
});
