import type { Stall } from './stalls.js';
import type { Verdict } from './verify.js';

export interface ScenarioResult {
  name: string;
  /** What was done to the system, in words: "12 kills, 12 restarts, 40 Slack faults". */
  actions: string[];
  verdict: Verdict;
  /** Driver scripts that never finished, and anything else that is wrong. */
  problems: string[];
  /** The longest a due tick, a finished run or a pending notification waited while the database was up. */
  longestStall: Stall;
  seconds: number;
}

/** A scenario passes when nothing was lost, doubled, misordered, left unevaluated or stuck. */
export function passed(r: ScenarioResult): boolean {
  const v = r.verdict;
  return v.duplicated === 0 && v.lost === 0 && v.unevaluated === 0 && v.alertsOpenedTwice === 0 && v.ticksFiredTwice === 0 && v.misordered === 0 && v.storyMismatches.length === 0 && r.problems.length === 0;
}

/** The table `npm run chaos` prints (and docs/reliability.md keeps): one row per scenario. */
export function renderTable(results: ScenarioResult[]): string {
  const header = ['scenario', 'actions', 'runs', 'expected', 'delivered', 'duplicated', 'lost', 'dead', 'longest stall', 'checks', 'time'];
  const rows = results.map((r) => {
    const v = r.verdict;
    const checks = passed(r)
      ? 'ok'
      : [
          v.unevaluated && `${v.unevaluated} unevaluated`,
          v.alertsOpenedTwice && `${v.alertsOpenedTwice} alerts twice`,
          v.ticksFiredTwice && `${v.ticksFiredTwice} ticks twice`,
          v.misordered && `${v.misordered} misordered`,
          v.storyMismatches.length && `${v.storyMismatches.length} stories wrong`,
          r.problems.length && `${r.problems.length} problems`,
        ]
          .filter(Boolean)
          .join(', ') || 'FAILED';
    return [r.name, r.actions.join(', '), String(v.runs), String(v.expected), String(v.delivered), String(v.duplicated), String(v.lost), String(v.dead), `${r.longestStall.seconds.toFixed(1)}s (${r.longestStall.what})`, checks, `${Math.round(r.seconds)}s`];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
