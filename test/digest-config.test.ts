import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkflowsFile, WorkflowsFileError } from '../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../src/services/sync-workflows.js';
import { startTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { T0 } from './helpers/factories.js';
import { apiClient } from './helpers/http-api.js';

/** The tenant's `digest` schedule: validated like the other fields, stored by the file sync and by PUT /api/v1/tenants. */

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const admin = () => apiClient(app.url, ADMIN);

beforeAll(async () => {
  t = await createTestDatabase();
  app = await startTestApp(t, { API_TOKEN: ADMIN });
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const file = (digest: unknown) => JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', digest }], workflows: [] }, null, 2);
const digestOf = async (id: string) => (await t.db.selectFrom('tenants').select('digest').where('id', '=', id).executeTakeFirstOrThrow()).digest;

describe('the tenant digest schedule', () => {
  it('names the field path and the value of a bad cron, zone or field', () => {
    let problems: string[] = [];
    try {
      parseWorkflowsFile(file({ cron: '0 25 * * *', timezone: 'Mars/Olympus', when: 'daily' }), 'wf.json', {});
    } catch (error) {
      if (error instanceof WorkflowsFileError) problems = error.problems;
    }
    expect(problems).toHaveLength(3);
    expect(problems.find((p) => p.includes('tenants[0].digest.cron'))).toMatch(/invalid cron: .*\(got "0 25 \* \* \*"\)$/);
    expect(problems.find((p) => p.includes('tenants[0].digest.timezone'))).toMatch(/not an IANA time zone .*\(got "Mars\/Olympus"\)$/);
    expect(problems.find((p) => p.includes('tenants[0].digest'))).toBeDefined();
    expect(problems.some((p) => p.includes('unknown field "when"'))).toBe(true);
  });

  it('is stored by the file sync (UTC when no zone is given) and cleared when taken out', async () => {
    await syncWorkflowsFile(t.db, parseWorkflowsFile(file({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }), 'wf.json', {}), T0, {});
    expect(await digestOf('acme')).toEqual({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
    await syncWorkflowsFile(t.db, parseWorkflowsFile(file({ cron: '0 8 * * 1' }), 'wf.json', {}), T0, {});
    expect(await digestOf('acme')).toEqual({ cron: '0 8 * * 1', timezone: 'UTC' });
    await syncWorkflowsFile(t.db, parseWorkflowsFile(file(undefined), 'wf.json', {}), T0, {});
    expect(await digestOf('acme')).toBeNull();
  });

  it('is accepted by PUT /api/v1/tenants and shown back; a bad one is a 400 naming body.digest', async () => {
    const put = await admin()('PUT', '/api/v1/tenants/initech', { name: 'Initech', digest: { cron: '30 7 * * *', timezone: 'America/New_York' } });
    expect(put.status).toBe(201);
    expect(put.body.digest).toEqual({ cron: '30 7 * * *', timezone: 'America/New_York' });
    expect(await digestOf('initech')).toEqual({ cron: '30 7 * * *', timezone: 'America/New_York' });
    const lower = await admin()('PUT', '/api/v1/tenants/initech', { name: 'Initech', digest: { cron: '30 7 * * *', timezone: 'america/new_york' } });
    expect(lower.body.digest).toEqual({ cron: '30 7 * * *', timezone: 'America/New_York' });
    expect(await digestOf('initech')).toEqual({ cron: '30 7 * * *', timezone: 'America/New_York' });
    const bad = await admin()('PUT', '/api/v1/tenants/initech', { name: 'Initech', digest: { cron: 'daily at nine' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual([expect.stringMatching(/^body: digest\.cron: invalid cron: .*\(got "daily at nine"\)$/)]);
    expect(await digestOf('initech')).toEqual({ cron: '30 7 * * *', timezone: 'America/New_York' });
  });
});
