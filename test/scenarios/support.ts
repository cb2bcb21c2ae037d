import { afterEach } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { replayScenario, type ReplayResult } from '../../src/replay/replay-scenario.js';
import { checkScenario, type ScenarioInput } from '../../src/replay/scenario.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Scenarios written inline (the shapes nobody wrote down yet), replayed
 * through the real engine on a database of their own; the database is
 * dropped after each test.
 */
let open: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(open.map((t) => t.drop()));
  open = [];
});

export interface Replayed extends ReplayResult {
  db: Db;
}

/** `escalationIntervalSeconds` coarsens the escalation clock's grid: days with an alert open replay faster. */
export async function replay(input: ScenarioInput, options: { escalationIntervalSeconds?: number } = {}): Promise<Replayed> {
  const t = await createTestDatabase();
  open.push(t);
  const result = await replayScenario(checkScenario(input), { db: t.db, ...options });
  return { ...result, db: t.db };
}

/** Each tick's original row of a workflow, oldest first: `HH:MM status` in UTC, with the date when `withDate`. */
export async function tickRows(db: Db, workflow: string, withDate = false): Promise<string[]> {
  const rows = await db
    .selectFrom('runs')
    .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
    .select(['runs.tick', 'runs.status'])
    .where('workflows.name', '=', workflow)
    .where('runs.originalRunId', 'is', null)
    .where('runs.tick', 'is not', null)
    .orderBy('runs.tick')
    .execute();
  return rows.map((r) => `${r.tick!.toISOString().slice(withDate ? 5 : 11, 16)} ${r.status}`);
}

export async function alertsOf(db: Db, workflow?: string) {
  let q = db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').selectAll('alerts').select('workflows.name as workflow').orderBy('alerts.id');
  if (workflow) q = q.where('workflows.name', '=', workflow);
  return q.execute();
}

export async function eventKinds(db: Db, alertId: number): Promise<string[]> {
  const rows = await db.selectFrom('alertEvents').select('kind').where('alertId', '=', alertId).orderBy('id').execute();
  return rows.map((r) => r.kind);
}

export const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;
