import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createPool } from '../../src/db/connect.js';
import { parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/** `dependsOn` in the workflows file and the workflows API: names, cycles, and what a tenant token may name. */

function problemsOf(file: unknown): string[] {
  try {
    parseWorkflowsFile(JSON.stringify(file, null, 2), 'wf.json');
  } catch (error) {
    if (error instanceof WorkflowsFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

const tenants = [
  { id: 'acme', name: 'Acme', channel: 'CACME' },
  { id: 'globex', name: 'Globex', channel: 'CGLOBEX' },
];

describe('dependsOn in the workflows file', () => {
  it('refuses unknown names and cycles with the path, the line, the value and the cycle spelled out', () => {
    const problems = problemsOf({
      tenants,
      workflows: [
        { tenant: 'acme', name: 'load', cron: '0 2 * * *', dependsOn: ['report'] },
        { tenant: 'acme', name: 'report', cron: '0 3 * * *', dependsOn: ['load', 'globex/nope'] },
        { tenant: 'globex', name: 'sync', cron: '0 4 * * *', dependsOn: ['load', 'acme/bad name'] },
      ],
    });
    expect(problems).toEqual([
      expect.stringMatching(/^wf\.json:\d+: workflows\[0\]\.dependsOn\[0\]: dependency cycle: load → report → load \(got "report"\)$/),
      expect.stringMatching(/^wf\.json:\d+: workflows\[1\]\.dependsOn\[1\]: no such workflow \(got "globex\/nope"\)$/),
      // "load" from globex is globex's own (it has none): another tenant's is written acme/load.
      expect.stringMatching(/^wf\.json:\d+: workflows\[2\]\.dependsOn\[0\]: no such workflow \(got "load"\)$/),
      expect.stringMatching(/^wf\.json:\d+: workflows\[2\]\.dependsOn\[1\]: a workflow name of the same tenant, or tenant\/name .* \(got "acme\/bad name"\)$/),
    ]);
  });

  it('are synced by id, and replaced when the file changes', async () => {
    const t = await createTestDatabase();
    try {
      const file = (dependsOn: string[]) =>
        parseWorkflowsFile(
          JSON.stringify({
            tenants,
            workflows: [
              { tenant: 'acme', name: 'load', cron: '0 2 * * *' },
              { tenant: 'acme', name: 'report', cron: '0 3 * * *' },
              { tenant: 'globex', name: 'sync', cron: '0 4 * * *', dependsOn },
            ],
          }),
        );
      const names = async () =>
        (
          await t.db
            .selectFrom('workflowDependencies as d')
            .innerJoin('workflows as w', 'w.id', 'd.workflowId')
            .innerJoin('workflows as u', 'u.id', 'd.upstreamId')
            .select(['w.name as down', 'u.tenantId', 'u.name as up'])
            .orderBy('u.name')
            .execute()
        ).map((r) => `${r.down} <- ${r.tenantId}/${r.up}`);
      await syncWorkflowsFile(t.db, file(['acme/load', 'acme/report']), new Date('2026-03-10T00:00:00Z'), {});
      expect(await names()).toEqual(['sync <- acme/load', 'sync <- acme/report']);
      await syncWorkflowsFile(t.db, file(['acme/report']), new Date('2026-03-10T00:01:00Z'), {});
      expect(await names()).toEqual(['sync <- acme/report']);
    } finally {
      await t.drop();
    }
  });
});

describe('dependsOn in the workflows API', () => {
  const ADMIN = 'admin-token-0123456789abcdef';
  let t: TestDatabase;
  let app: Awaited<ReturnType<typeof startTestApp>>;
  let admin: ReturnType<typeof apiClient>;
  let acme: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    t = await createTestDatabase();
    await makeTenant(t.db);
    await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
    await makeWorkflow(t.db, { tenantId: 'globex', name: 'secret-ledger', cron: '0 1 * * *', source: 'api' });
    app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: new ManualClock('2026-03-10T02:00:00Z') });
    admin = apiClient(app.url, ADMIN);
    acme = apiClient(app.url, (await admin('POST', '/api/v1/tenants/acme/token')).body.token);
  });
  afterAll(async () => {
    await app.stop();
    await t.drop();
  });

  const put = (client: typeof admin, tenant: string, name: string, dependsOn: unknown) => client('PUT', `/api/v1/workflows/${tenant}/${name}`, { cron: '0 * * * *', dependsOn });

  it('a tenant token names its own workflows; GET shows them', async () => {
    expect((await put(acme, 'acme', 'load', [])).status).toBe(201);
    const created = await put(acme, 'acme', 'report', ['load']);
    expect(created.status).toBe(201);
    expect(created.body.dependsOn).toEqual(['load']);
    expect((await acme('GET', '/api/v1/workflows/acme/report')).body).toMatchObject({ dependsOn: ['load'], upstreamBlocked: null });
  });

  it('an unknown name or a cycle is a 400 naming the path and the value', async () => {
    const unknown = await put(acme, 'acme', 'report', ['load', 'nope']);
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toEqual(['body: dependsOn[1]: no such workflow (got "nope")']);
    const cycle = await put(acme, 'acme', 'load', ['report']);
    expect(cycle.status).toBe(400);
    expect(cycle.body.issues).toEqual(['body: dependsOn[0]: dependency cycle: load → report → load (got "report")']);
    const self = await put(acme, 'acme', 'load', ['load']);
    expect(self.body.issues).toEqual(['body: dependsOn[0]: a workflow cannot depend on itself (load → load) (got "load")']);
    const malformed = await put(acme, 'acme', 'load', ['a b']);
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain('dependsOn[0]');
  });

  it("a tenant token naming another tenant's workflow gets the same answer whether it exists or not", async () => {
    const existing = await put(acme, 'acme', 'probe', ['globex/secret-ledger']);
    const missing = await put(acme, 'acme', 'probe', ['globex/no-such-thing']);
    const noTenant = await put(acme, 'acme', 'probe', ['initech/anything']);
    for (const answer of [existing, missing, noTenant]) {
      expect(answer.status).toBe(400);
      expect(answer.body.issues).toEqual([expect.stringMatching(/^body: dependsOn\[0\]: a tenant token may depend only on its own tenant's workflows \(got "[^"]+"\)$/)]);
    }
    expect(existing.body.issues[0].replace('secret-ledger', 'X')).toBe(missing.body.issues[0].replace('no-such-thing', 'X'));
  });

  it("the admin token may link tenants; a tenant token reading the workflow sees only its own tenant's names", async () => {
    const linked = await put(admin, 'acme', 'consolidation', ['load', 'globex/secret-ledger']);
    expect(linked.status).toBe(201);
    expect(linked.body.dependsOn).toEqual(['load', 'globex/secret-ledger']);
    const seen = await acme('GET', '/api/v1/workflows/acme/consolidation');
    expect(seen.body.dependsOn).toEqual(['load']);
    expect(seen.body.dependsOnOtherTenants).toBe(1);
    expect(JSON.stringify(seen.body)).not.toContain('secret-ledger');
  });

  it("a tenant token's PUT keeps the operator's links to other tenants, which it can neither see nor restate", async () => {
    expect((await put(admin, 'acme', 'linked', ['load', 'globex/secret-ledger'])).status).toBe(201);
    const edited = await put(acme, 'acme', 'linked', ['report']);
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ dependsOn: ['report'], dependsOnOtherTenants: 1 });
    expect((await admin('GET', '/api/v1/workflows/acme/linked')).body.dependsOn).toEqual(['report', 'globex/secret-ledger']);
    expect((await put(admin, 'acme', 'linked', [])).status).toBe(200);
    expect((await admin('GET', '/api/v1/workflows/acme/linked')).body.dependsOn).toEqual([]);
  });

  it("a cycle through an operator's link to another tenant is refused to a tenant token without naming that workflow", async () => {
    expect((await put(acme, 'acme', 'stage', [])).status).toBe(201);
    expect((await put(admin, 'globex', 'mirror', ['acme/stage'])).status).toBe(201);
    expect((await put(admin, 'acme', 'publish', ['globex/mirror'])).status).toBe(201);
    const cycle = await put(acme, 'acme', 'stage', ['publish']);
    expect(cycle.status).toBe(400);
    expect(cycle.body.issues).toEqual([`body: dependsOn[0]: dependency cycle: stage → publish → another tenant's workflow → stage (got "publish")`]);
    expect(cycle.text).not.toContain('mirror');
    const asAdmin = await put(admin, 'acme', 'stage', ['publish']);
    expect(asAdmin.body.issues).toEqual(['body: dependsOn[0]: dependency cycle: stage → publish → globex/mirror → stage (got "publish")']);
  });

  it('a deleted workflow put back cannot close a cycle through the links still pointing at it', async () => {
    expect((await put(acme, 'acme', 'extract', [])).status).toBe(201);
    expect((await put(acme, 'acme', 'transform', ['extract'])).status).toBe(201);
    expect((await acme('DELETE', '/api/v1/workflows/acme/extract')).status).toBe(200);
    const back = await put(acme, 'acme', 'extract', ['transform']);
    expect(back.status).toBe(400);
    expect(back.body.issues).toEqual(['body: dependsOn[0]: dependency cycle: extract → transform → extract (got "transform")']);
  });

  it('two replicas adding the two halves of a cycle at once: one is stored, the other refused naming the cycle', async () => {
    const second = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: new ManualClock('2026-03-10T02:00:00Z') });
    const other = apiClient(second.url, ADMIN);
    const holder = await createPool(t.url, 1).connect();
    try {
      for (const name of ['left', 'right', 'base']) expect((await put(admin, 'acme', name, [])).status).toBe(201);
      expect((await put(admin, 'acme', 'left', ['base'])).status).toBe(200);
      const left = (await t.db.selectFrom('workflows').select('id').where('tenantId', '=', 'acme').where('name', '=', 'left').executeTakeFirstOrThrow()).id;
      const waiting = async (n: number) => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db);
        expect(rows[0]!.n).toBe(n);
      };
      // Hold left's stored links: the first PUT checks the graph, then waits to replace them.
      await holder.query('begin');
      await holder.query('select 1 from workflow_dependencies where workflow_id = $1 for update', [left]);
      const first = put(admin, 'acme', 'left', ['right']);
      await eventually(() => waiting(1));
      const secondPut = put(other, 'acme', 'right', ['left']);
      let settled = false;
      void secondPut.then(() => (settled = true));
      await eventually(async () => {
        if (!settled) await waiting(2);
      });
      await holder.query('commit');
      const answers = await Promise.all([first, secondPut]);
      expect(answers.map((a) => a.status)).toEqual([200, 400]);
      expect(answers[1]!.body.issues).toEqual(['body: dependsOn[0]: dependency cycle: right → left → right (got "left")']);
    } finally {
      await holder.query('rollback').catch(() => {});
      holder.release();
      await second.stop();
    }
  });
});
