import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * JSON a tenant sends to hurt the server rather than to configure anything:
 * nesting deep enough to overflow a recursive walk (the 400's own "got"
 * value did, a 500), and keys that name the prototype.
 */

const ACME_TOKEN = 'sbt_acme-hostile-token-0123456789abcd';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const acme = () => apiClient(app.url, ACME_TOKEN);
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  app = await startTestApp(t, { API_TOKEN: 'admin-token-hostile-0123456789abcdef' });
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

describe('hostile JSON', () => {
  it('an object nested 5,000 deep in a workflow: 400 naming where, nothing stored', async () => {
    const res = await acme()('PUT', '/api/v1/workflows/acme/deep', `{"cron":"0 2 * * *","policy":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`, json);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body\.policy(\.a)+: nested deeper than 32 levels$/);
    expect(await t.db.selectFrom('workflows').select('id').where('name', '=', 'deep').execute()).toEqual([]);
  });

  it('100,000 nested arrays as a run report: 400, nothing stored', async () => {
    const res = await acme()('POST', '/api/v1/runs', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, json);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body(\[0\])+: nested deeper than 32 levels$/);
    expect(await t.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });

  it('nesting within the limit is judged by the schema as usual', async () => {
    const res = await acme()('PUT', '/api/v1/workflows/acme/shallow', `{"cron":"0 2 * * *","policy":${'{"a":'.repeat(20)}1${'}'.repeat(20)}}`, json);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body: policy: unknown field "a"/);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('a "%s" key is refused (400: not allowed as a key, or an unknown field), and pollutes nothing', async (key) => {
    const res = await acme()('PUT', '/api/v1/workflows/acme/proto', `{"cron":"0 2 * * *","${key}":{"polluted":true,"prototype":{"polluted":true}}}`, json);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(key === '__proto__' ? 'body: "__proto__" is not allowed as a key' : `unknown field "${key}"`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await t.db.selectFrom('workflows').select('id').where('name', '=', 'proto').execute()).toEqual([]);
  });
});
