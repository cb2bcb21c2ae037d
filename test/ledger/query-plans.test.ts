import { sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../bench/lib/history.js';
import { seedTenants, seedWorkflows } from '../../bench/lib/seed.js';
import type { Db } from '../../src/db/connect.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { checkFreshness } from '../../src/engine/freshness.js';
import { loadHistoryFacts } from '../../src/ledger/history-facts.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { reportRun } from '../../src/services/ingest.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import { claimNotifications } from '../../src/notify/claim-notifications.js';
import { countRunsByStatus } from '../../src/ledger/run-counts.js';
import { claimStorms } from '../../src/ledger/storm-claims.js';
import { capturing } from '../helpers/capture-statements.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine } from '../helpers/engine-harness.js';

/**
 * The hot queries stay index-bounded as history grows (issue 15). A modest
 * history (100 workflows × 500 five-minute ticks = 50,000 runs, with the
 * alerts, events and notifications of its incidents) is analysed, the real
 * loops run once on it, every statement they send is captured as kysely
 * compiled it, and EXPLAIN (FORMAT JSON) of each, with its own parameters,
 * must not read runs, alert_events or notifications with a sequential scan.
 */
const NOW = new Date('2026-03-10T12:00:00Z');
const HISTORY_END = new Date(NOW.getTime() - 30 * 60_000);
const WORKFLOWS = 100;
const LEDGER = new Set(['runs', 'alert_events', 'notifications']);

let t: TestDatabase;
const plans = new Map<string, Scan[]>();
let escalationClaim: CompiledQuery | undefined;
let escalatedByPass = 0;

interface Scan {
  node: string;
  relation: string;
  index?: string;
  sql: string;
}

async function scansOf(query: CompiledQuery): Promise<Scan[]> {
  const { rows } = await t.pool.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${query.sql}`, query.parameters as unknown[]);
  const out: Scan[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (typeof node['Relation Name'] === 'string') out.push({ node: String(node['Node Type']), relation: node['Relation Name'], ...(node['Index Name'] ? { index: String(node['Index Name']) } : {}), sql: query.sql });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  for (const plan of rows[0]!['QUERY PLAN'] as { Plan: Record<string, unknown> }[]) walk(plan.Plan);
  return out;
}

async function explainAll(name: string, queries: CompiledQuery[]): Promise<void> {
  const scans: Scan[] = [];
  for (const q of queries) scans.push(...(await scansOf(q)));
  plans.set(name, scans);
}

beforeAll(async () => {
  t = await createTestDatabase();
  await seedTenants(t.db, 5);
  await seedWorkflows(t.db, { count: WORKFLOWS, tenants: 5 });
  const loaded = await seedHistory(t, { end: HISTORY_END, ticks: 500, stepMinutes: 5, incidentEvery: 20 });
  expect(loaded.runs).toBe(50_000);

  // What the loops find to do now: half the workflows managed and due, the other half observed and 20 minutes behind;
  // ten workflows with two fresh failures to evaluate, ten with an open warning past its deadline, runs past their deadline.
  await sql`update workflows set mode = 'managed', launcher = '{"kind": "command", "command": "true"}', next_tick_at = ${new Date(NOW.getTime() - 60_000)} where id % 2 = 0`.execute(t.db);
  await sql`update workflows set next_tick_at = ${HISTORY_END} where id % 2 = 1`.execute(t.db);
  await sql`
    insert into runs (workflow_id, tick, trigger, status, attempt_status, error, attempt_error, started_at, finished_at, created_at)
    select w, ${HISTORY_END}::timestamptz + make_interval(mins => 5 * k), 'external', 'failed', 'failed', 'disk full', 'disk full',
      ${HISTORY_END}::timestamptz + make_interval(mins => 5 * k), ${HISTORY_END}::timestamptz + make_interval(mins => 5 * k, secs => 10), ${NOW}
    from generate_series(1, 19, 2) w cross join generate_series(0, 1) k
  `.execute(t.db);
  await sql`
    insert into alerts (workflow_id, generation, status, severity, opened_at, escalate_at, cadence_seconds, policy, consecutive_failures, last_error, error_group, updated_at)
    select w, 1, 'open', 'warning', ${HISTORY_END}, ${new Date(NOW.getTime() - 60_000)}, 300, '{}', 3, 'connection refused', 'g1', ${HISTORY_END}
    from generate_series(21, 39, 2) w
  `.execute(t.db);
  // Open warnings that are not due (their deadline ahead, failures below the threshold): the escalation clock leaves them unlocked.
  await sql`
    insert into alerts (workflow_id, generation, status, severity, opened_at, escalate_at, cadence_seconds, policy, consecutive_failures, last_error, error_group, updated_at)
    select w.id, 100, 'open', 'warning', ${HISTORY_END}, ${new Date(NOW.getTime() + 3_600_000)}, 300, '{"escalateAfterFailures": 6}', 3, 'connection refused', 'g1', ${HISTORY_END}
    from workflows w where w.id between 51 and 100 and not exists (select 1 from alerts a where a.workflow_id = w.id and a.status = 'open')
  `.execute(t.db);
  await sql`
    insert into runs (workflow_id, tick, trigger, status, started_at, deadline_at, created_at)
    select w, ${HISTORY_END}, 'manual', 'running', ${HISTORY_END}, ${new Date(NOW.getTime() - 60_000)}, ${NOW} from generate_series(41, 49, 2) w
  `.execute(t.db);
  await sql`update notifications set status = 'dead', last_error = 'channel_not_found' where id % 500 = 0`.execute(t.db);
  await sql`analyze`.execute(t.db);

  const capture = capturing(t.db);
  const engine = createEngine(capture.db, NOW);
  engine.launcher.otherwise('hold');
  const deps = engine.deps;
  capture.take();
  await capture.db.transaction().execute((trx) => loadHistoryFacts(trx, Array.from({ length: WORKFLOWS }, (_, i) => i + 1)));
  await explainAll('evaluator: history facts', capture.take());
  // A reported failure evaluated in its own transaction (with the two unprocessed failures before it): the claim restricted to one workflow.
  expect(await reportRun(deps, { tenant: 'bench-2', workflow: 'wf-3', status: 'failed', tick: NOW, error: 'disk full' }, {})).toMatchObject({ kind: 'created' });
  await explainAll('report evaluated with itself', capture.take());
  await pollFinishedRuns(deps);
  await explainAll('poller claim and evaluation', capture.take());
  const dueBefore = await sql<{ n: number }>`select count(*)::int as n from alerts where status = 'open' and severity = 'critical'`.execute(t.db);
  await runEscalationClock(deps);
  const escalation = capture.take();
  escalationClaim = escalation.find((q) => q.sql.includes('escalation_threshold'));
  escalatedByPass = (await sql<{ n: number }>`select count(*)::int as n from alerts where status = 'open' and severity = 'critical'`.execute(t.db)).rows[0]!.n - dueBefore.rows[0]!.n;
  await explainAll('escalation clock', escalation);
  await checkFreshness(deps);
  await explainAll('freshness detector', capture.take());
  await fireDueTicks(deps);
  await explainAll('tick scheduler claim', capture.take());
  await claimNotifications(capture.db, { now: NOW, owner: 'plans', leaseMs: 60_000, limit: 50, kinds: ['slack'], exclude: [] });
  await explainAll('outbox claim', capture.take());
  await renderMetrics({ db: capture.db, clock: engine.clock });
  await explainAll('/metrics scrape', capture.take());
  // The storm decision of a batch that opened alerts in every tenant's channel (rolled back: only its statements matter).
  await capture.db
    .transaction()
    .execute(async (trx) => {
      await claimStorms(trx, ['slack:CBENCH0', 'slack:CBENCH1', 'slack:CBENCH2'], NOW, { minAlerts: 1, windowSeconds: 120 });
      throw new RolledBack();
    })
    .catch((e: unknown) => {
      if (!(e instanceof RolledBack)) throw e;
    });
  await explainAll('storm claim', capture.take());
}, 180_000);
afterAll(() => t?.drop());

class RolledBack extends Error {}

describe('query plans on a history of 50,000 runs', () => {
  it.each([
    ['evaluator: history facts', 'runs'],
    ['report evaluated with itself', 'runs'],
    ['poller claim and evaluation', 'runs'],
    ['escalation clock', 'alerts'],
    ['freshness detector', 'runs'],
    ['tick scheduler claim', 'runs'],
    ['outbox claim', 'notifications'],
    ['/metrics scrape', 'notifications'],
    ['storm claim', 'notifications'],
  ])('%s: no sequential scan of runs, alert_events or notifications', (name, reads) => {
    const scans = plans.get(name)!;
    // It ran and reached the table it is about, other than by a sequential scan (a test that captured nothing would pass vacuously).
    expect(scans.some((s) => s.relation === reads && s.node !== 'Seq Scan')).toBe(true);
    const sequential = scans.filter((s) => s.node === 'Seq Scan' && LEDGER.has(s.relation));
    expect(sequential.map((s) => `${s.relation}: ${s.sql.slice(0, 300)}`)).toEqual([]);
  });

  it('the escalation clock locks only the warnings that are due, through alerts_escalation_due', async () => {
    expect(escalatedByPass).toBe(10);
    // The ten it escalated, due again as before the pass: its claim, run again, locks those ten and no other warning.
    await sql`update alerts set severity = 'warning', escalated_at = null where status = 'open' and severity = 'critical' and workflow_id between 21 and 39`.execute(t.db);
    const claim = escalationClaim!;
    const { rows } = await t.pool.query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(`explain (analyze, format json) ${claim.sql}`, claim.parameters as unknown[]);
    const nodes: Record<string, unknown>[] = [];
    const walk = (node: Record<string, unknown>) => {
      nodes.push(node);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(rows[0]!['QUERY PLAN'][0]!.Plan);
    expect(nodes.find((n) => n['Relation Name'] === 'alerts')?.['Index Name']).toBe('alerts_escalation_due');
    const openWarnings = await sql<{ n: number }>`select count(*)::int as n from alerts where status = 'open' and severity = 'warning' and acknowledged_at is null`.execute(t.db);
    expect(openWarnings.rows[0]!.n).toBeGreaterThan(40);
    expect(nodes.find((n) => n['Node Type'] === 'LockRows')?.['Actual Rows']).toBe(10);
  });

  it('the evaluator reads a few pages a workflow, not its history', async () => {
    const capture = capturing(t.db);
    await capture.db.transaction().execute((trx) => loadHistoryFacts(trx, Array.from({ length: WORKFLOWS }, (_, i) => i + 1), []));
    const facts = capture.take().find((q) => q.sql.includes('with w as'))!;
    const { rows } = await t.pool.query<{ 'QUERY PLAN': { Plan: Record<string, number> }[] }>(`explain (analyze, buffers, format json) ${facts.sql}`, facts.parameters as unknown[]);
    const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    // A workflow's 500 ticks lie on about as many pages (rows arrive in time order, interleaved): an index scan
    // that still walks the whole history reads hundreds of pages a workflow; the bounded walks read a handful.
    expect((plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!) / WORKFLOWS).toBeLessThan(50);
  });

  it('counts runs by status from statistics, not a scan, once the ledger is large', async () => {
    const counts = await countRunsByStatus(t.db);
    expect(counts.estimated).toBe(true);
    const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from runs group by status`.execute(t.db);
    const actual = new Map(rows.map((r) => [r.status, r.n]));
    // ANALYZE samples: the estimate of the two big statuses is close, the in-flight ones exact.
    expect(counts.byStatus.get('succeeded')! / actual.get('succeeded')!).toBeGreaterThan(0.9);
    expect(counts.byStatus.get('succeeded')! / actual.get('succeeded')!).toBeLessThan(1.1);
    expect(counts.byStatus.get('failed')! / actual.get('failed')!).toBeGreaterThan(0.8);
    expect(counts.byStatus.get('failed')! / actual.get('failed')!).toBeLessThan(1.2);
    expect(counts.byStatus.get('running')).toBe(actual.get('running') ?? 0);
    expect(counts.byStatus.get('pending_retry')).toBe(actual.get('pending_retry') ?? 0);
    expect((await countRunsByStatus(t.db, 1_000_000)).estimated).toBe(false);
  });
});
