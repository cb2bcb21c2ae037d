import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { finishedRun } from '../runs/support.js';

/**
 * The headers a tenant gives its http launcher: never the ones that frame or
 * route the request (Host reaches another virtual host behind the allowed
 * target; Content-Length / Transfer-Encoding / Connection desynchronise it)
 * nor the bot's own (X-Scheduler-*, Content-Type); never a name or value
 * Node refuses to send (a CR/LF there), which was stored (201) and failed
 * every launch. Refused with a 400 naming the header; a stored row carrying
 * one (before this check) is sent without it.
 */

const ADMIN = 'admin-token-headers-0123456789abcdef';
const GLOBEX_TOKEN = 'sbt_globex-headers-token-0123456789ab';
const GLOBEX_LAUNCH = 'globex-headers-launch-secret-0123456';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const globex = () => apiClient(app.url, GLOBEX_TOKEN);

beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN), launcherHosts: JSON.stringify(['127.0.0.1']) });
  app = await startTestApp(t, { API_TOKEN: ADMIN });
});
afterAll(async () => {
  await app?.stop();
  await target?.stop();
  await t?.drop();
});

const workflowRow = (name: string) => t.db.selectFrom('workflows').selectAll().where('tenantId', '=', 'globex').where('name', '=', name).executeTakeFirst();
const put = (name: string, headers: Record<string, string>, who = globex()) =>
  who('PUT', `/api/v1/workflows/globex/${name}`, { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `${target.url}/${name}`, secret: GLOBEX_LAUNCH, headers } });

describe("an http launcher's headers", () => {
  it.each([
    ['Host', 'metadata.internal'],
    ['content-length', '0'],
    ['Transfer-Encoding', 'chunked'],
    ['connection', 'upgrade'],
    ['X-Scheduler-Signature', 'v1=forged'],
  ])('%s is the bot\'s: 400 naming it, nothing stored', async (name, value) => {
    const res = await put('framed', { [name]: value });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`body: launcher.headers.${name}: header "${name}" is set by the bot itself`);
    expect(await workflowRow('framed')).toBeUndefined();
  });

  it.each([
    ['a CR/LF in a value', { 'x-team': 'data\r\nx-injected: 1' }, 'body: launcher.headers.x-team: a header value cannot hold line breaks or control characters'],
    ['a space in a name', { 'x team': 'data' }, 'body: launcher.headers.x team: not a valid HTTP header name'],
    ['a colon in a name', { 'x-team:': 'data' }, 'body: launcher.headers.x-team:: not a valid HTTP header name'],
  ])('%s: 400 naming the header, for the admin too; nothing stored', async (_what, headers, message) => {
    for (const who of [globex(), apiClient(app.url, ADMIN)]) {
      const res = await put('crlf', headers, who);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(message);
    }
    expect(await workflowRow('crlf')).toBeUndefined();
  });

  it('a row stored before the check is launched without its reserved headers; the others are sent', async () => {
    await makeWorkflow(t.db, {
      tenantId: 'globex',
      name: 'legacy-headers',
      cron: '0 0 1 1 *',
      mode: 'observed',
      launcher: JSON.stringify({ kind: 'http', url: `${target.url}/legacy-headers`, mode: 'sync', secret: GLOBEX_LAUNCH, headers: { Host: 'metadata.internal', 'X-Team': 'data' } }),
    });
    const started = await globex()('POST', '/api/v1/workflows/globex/legacy-headers/run');
    expect(started.status).toBe(202);
    expect(await finishedRun(t.db, started.body.id)).toMatchObject({ status: 'succeeded' });
    const request = target.received.find((r) => r.url === '/legacy-headers')!;
    expect(request.headers.host).toBe(new URL(target.url).host);
    expect(request.headers['x-team']).toBe('data');
  });
});
