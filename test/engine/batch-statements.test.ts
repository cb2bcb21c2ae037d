import { capturing } from '../helpers/capture-statements.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import type { Workflow } from '../../src/db/schema.js';
import { PREPARED_MARK } from '../../src/db/prepared.js';
import { pollFinishedRunsDetailed } from '../../src/engine/poller.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow, minutes, T0 } from '../helpers/factories.js';

/**
 * What a poller batch costs in statements (issue 18, docs/performance.md
 * "where the rest goes"): the claim, the open alerts (which also write the
 * output checks), the history facts and the write, plus the three storm
 * statements when alerts open in a Slack channel; nothing for maintenance
 * windows or dependencies when there are none. Each is a named prepared
 * statement. (Begin and commit are the driver's and not counted here.)
 */
let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

/** The statements sent, whitespace folded. */
function capturingSql(db: Db): { db: Db; take(): string[] } {
  const c = capturing(db);
  return { db: c.db, take: () => c.take().map((q) => q.sql.replace(/\s+/g, ' ').trim()) };
}

const SHAPES: [RegExp, string][] = [
  [/with recursive upstream_of.*candidates as/, 'claim'],
  [/with checked as \( update runs/, 'open alerts and output checks'],
  [/with w as \( select id as workflow_id/, 'history facts'],
  [/with opened as \( insert into alerts/, 'write'],
  [/pg_advisory_xact_lock/, 'storm locks'],
  [/select d\.destination, s\.id as storm_id/, 'storm read'],
  [/with j as \( select \* from jsonb_to_recordset/, 'storm join'],
];
const shapeOf = (text: string) => SHAPES.find(([re]) => re.test(text))?.[1] ?? text.slice(0, 80);

async function batchOf(db: Db, workflows: Workflow[], status: 'failed' | 'succeeded', tick: Date) {
  for (const wf of workflows) await reportRun(db, wf, tick, { status, ...(status === 'failed' ? { error: 'warehouse unreachable' } : {}) }, new Date(tick.getTime() + minutes(1)));
}

it('a batch that opens alerts in a storm: claim, open alerts, history, write and three storm statements, all prepared', async () => {
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const workflows: Workflow[] = [];
  for (let i = 0; i < 8; i++) workflows.push(await makeWorkflow(t.db, { name: `wf-${i}`, cron: '0 * * * *', policy: JSON.stringify({ alertAfter: 1, retries: 0 }) }));
  const capture = capturingSql(t.db);
  const engine = createEngine(capture.db, new Date(T0.getTime() + minutes(1)));

  await batchOf(t.db, workflows, 'failed', T0);
  capture.take();
  expect(await pollFinishedRunsDetailed(engine.deps)).toHaveLength(8);
  const failing = capture.take();
  expect(failing.map(shapeOf)).toEqual(['claim', 'open alerts and output checks', 'history facts', 'write', 'storm locks', 'storm read', 'storm join']);
  expect(failing.every((q) => q.startsWith(PREPARED_MARK.trim()))).toBe(true);
  expect(await t.db.selectFrom('alerts').select('id').execute()).toHaveLength(8);
  expect((await t.db.selectFrom('storms').select('destination').orderBy('destination').execute()).map((s) => s.destination)).toEqual(['slack:CACME', 'slack:CPLATFORM']);
  expect(await t.db.selectFrom('stormAlerts').select('alertId').execute()).toHaveLength(16);
  expect(await t.db.selectFrom('runs').select('errorGroup').where('errorGroup', 'is', null).execute()).toEqual([]);

  // A healthy batch: the claim, the open alerts and the history; the write only for what changed (healthy streaks here).
  await batchOf(t.db, workflows, 'succeeded', new Date(T0.getTime() + minutes(60)));
  engine.clock.set(new Date(T0.getTime() + minutes(61)));
  expect(await pollFinishedRunsDetailed(engine.deps)).toHaveLength(8);
  expect(capture.take().map(shapeOf)).toEqual(['claim', 'open alerts and output checks', 'history facts', 'write']);
});

it('a quiet batch of successes with no alert open: three statements', async () => {
  await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
  const workflows: Workflow[] = [];
  for (let i = 0; i < 5; i++) workflows.push(await makeWorkflow(t.db, { name: `ok-${i}`, cron: '0 * * * *' }));
  const capture = capturingSql(t.db);
  const engine = createEngine(capture.db, new Date(T0.getTime() + minutes(1)));
  await batchOf(t.db, workflows, 'succeeded', T0);
  capture.take();
  expect(await pollFinishedRunsDetailed(engine.deps)).toHaveLength(5);
  expect(capture.take().map(shapeOf)).toEqual(['claim', 'open alerts and output checks', 'history facts']);
});
