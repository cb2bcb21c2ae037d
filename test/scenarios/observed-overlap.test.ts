import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { reportRun } from '../../src/services/ingest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, type Engine, stepUntil } from '../helpers/engine-harness.js';

/**
 * An observed hourly job that takes 90 minutes, started by a scheduler that
 * does not start a run while the last one still goes (a Kubernetes CronJob
 * with `concurrencyPolicy: Forbid`, cron behind `flock -n`): every other tick
 * has no run. With `overlap: skip` the workflow says so, and those ticks are
 * skipped, not missed: before, each was a failure, and the job, succeeding
 * every run, opened a "failing intermittently" alert within the day.
 */

let t: TestDatabase;
let engine: Engine;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => t.drop());

const hour = (h: number) => new Date(Date.UTC(2026, 2, 9, h));
const report = (status: 'running' | 'succeeded', externalId: string) => reportRun(engine.deps, { tenant: 'acme', workflow: 'long-hourly', status, externalId }, {});

async function runLongHourly(policy: Record<string, unknown>) {
  engine = createEngine(t.db, '2026-03-09T11:50:00Z');
  const file = { tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows: [{ tenant: 'acme', name: 'long-hourly', cron: '0 * * * *', mode: 'observed', policy }] };
  await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(file)), engine.clock.now(), {});
  await engine.step();
  // Runs start at 12:00, 14:00, … and take 90 minutes; the scheduler runs no tick while one goes.
  for (let h = 12; h < 24; h += 2) {
    await stepUntil(engine, new Date(hour(h).getTime() + 30_000), 300_000);
    await report('running', `r${h}`);
    await stepUntil(engine, new Date(hour(h).getTime() + 90 * 60_000), 300_000);
    await report('succeeded', `r${h}`);
  }
  await stepUntil(engine, hour(24), 300_000);
  const wf = await t.db.selectFrom('workflows').selectAll().where('name', '=', 'long-hourly').executeTakeFirstOrThrow();
  const rows = await t.db.selectFrom('runs').select(['tick', 'status', 'outcomeNote']).where('workflowId', '=', wf.id).orderBy('tick').execute();
  const alerts = await t.db.selectFrom('alerts').select(['status', 'severity']).where('workflowId', '=', wf.id).execute();
  return { rows, alerts };
}

describe('an observed job longer than its cadence whose scheduler skips a tick while it runs', () => {
  it('overlap: skip: a tick with no run while the last run still went is skipped, naming that run; nothing alerts', async () => {
    const { rows, alerts } = await runLongHourly({ timeoutSeconds: 7200, overlap: 'skip' });
    expect(rows.map((r) => `${r.tick!.toISOString().slice(11, 16)} ${r.status}`)).toEqual(
      ['12:00', '13:00', '14:00', '15:00', '16:00', '17:00', '18:00', '19:00', '20:00', '21:00', '22:00', '23:00'].map((h, i) => `${h} ${i % 2 ? 'skipped' : 'succeeded'}`),
    );
    expect(rows[1]!.outcomeNote).toMatch(/^not run: run \d+ \(tick 2026-03-09T12:00:00.000Z\) was still running \(overlap: skip\)$/);
    expect(alerts).toEqual([]);
  });

  it('overlap: allow (the default): the same silent ticks are missed, as before', async () => {
    const { rows, alerts } = await runLongHourly({ timeoutSeconds: 7200 });
    expect(rows.filter((r) => r.status === 'missed').map((r) => r.tick!.toISOString().slice(11, 16))).toEqual(['13:00', '15:00', '17:00', '19:00', '21:00', '23:00']);
    // Half its ticks failed, alternating: failing intermittently (what `overlap: skip` is for, when its scheduler skips).
    expect(alerts.map((a) => a.status)).toEqual(['open']);
  });
});
