import type { Db } from '../../src/db/connect.js';
import type { Insertable } from 'kysely';
import type { TenantsTable, WorkflowsTable } from '../../src/db/schema.js';
import { newPingKey } from '../../src/secrets.js';
import { newRunRow, type RunRow } from '../../src/ledger/runs.js';

/** The reference night of the seed: 10 March 2026, UTC. */
export const T0 = new Date('2026-03-10T02:00:00Z');

export const at = (iso: string) => new Date(iso);
export const minutes = (n: number) => n * 60_000;

export async function makeTenant(db: Db, overrides: Partial<Insertable<TenantsTable>> = {}) {
  return db
    .insertInto('tenants')
    .values({ id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: null, ...overrides })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeWorkflow(db: Db, overrides: Partial<Insertable<WorkflowsTable>> = {}) {
  return db
    .insertInto('workflows')
    .values({
      tenantId: 'acme',
      name: `wf-${newPingKey().slice(0, 6)}`,
      cron: '*/5 * * * *',
      timezone: 'UTC',
      mode: 'observed',
      launcher: null,
      pingKey: newPingKey(),
      nextTickAt: null,
      ...overrides,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function makeRun(db: Db, overrides: Partial<RunRow> & { workflowId: number }) {
  return db
    .insertInto('runs')
    .values(newRunRow({ tick: T0, trigger: 'schedule', status: 'succeeded', startedAt: T0, finishedAt: new Date(T0.getTime() + 60_000), ...overrides }))
    .returningAll()
    .executeTakeFirstOrThrow();
}
