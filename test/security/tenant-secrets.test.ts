import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { REDACTED } from '../../src/domain/redact.js';
import { hashToken, redactSecrets } from '../../src/secrets.js';
import { TENANT_SECRETS_CHANNEL } from '../../src/services/stored-secrets.js';
import { putWorkflow } from '../../src/services/workflows-api.js';
import { loadConfig } from '../../src/config/env.js';
import { workflowSchema } from '../../src/config/workflows-file.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { eventually } from '../runs/support.js';

/**
 * A tenant chooses its own secrets' values (a launcher's secret and
 * credential headers, a destination's secret), so they are redacted from its
 * own stored text and from the log, never from another tenant's; and a
 * secret stored through one replica is redacted by every other one
 * (src/secrets.ts, src/services/stored-secrets.ts).
 */
const ACME_TOKEN = 'sbt_acme-scope-token-0123456789abcdefg';
const GLOBEX_TOKEN = 'sbt_globex-scope-token-0123456789abcde';
const ACME_LAUNCH = 'acme-scope-launch-secret-0123456789';
// Ordinary words, chosen as a credential header's value: what a hostile tenant would pick.
const CHOSEN = 'connection refused by the warehouse';
const TICK = '2026-03-10T02:00:00.000Z';

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(T0);

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN) });
  await makeWorkflow(t.db, { tenantId: 'globex', name: 'nightly', cron: '0 2 * * *', policy: { alertAfter: 1, retries: 0 } });
  // Loops on, on a manual clock: only wake-ups move them.
  app = await startTestApp(t, { HTTP_LAUNCHER_ALLOWED_HOSTS: 'jobs.example.com' }, { clock, loops: true });
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

const storedError = async (runId: number) => (await t.db.selectFrom('runs').select('error').where('id', '=', runId).executeTakeFirstOrThrow()).error;

describe("a tenant's secrets", () => {
  it("are redacted from that tenant's run output and from the log, and never from another tenant's", async () => {
    const put = await apiClient(app.url, ACME_TOKEN)('PUT', '/api/v1/workflows/acme/export', {
      cron: '0 2 * * *',
      mode: 'observed',
      policy: { alertAfter: 1, retries: 0 },
      launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: ACME_LAUNCH, headers: { 'x-api-key': CHOSEN } },
    });
    expect(put.status).toBe(201);

    const acmeRun = await apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'export', status: 'failed', tick: TICK, error: `${CHOSEN}; signed with ${ACME_LAUNCH}` });
    expect(acmeRun.status).toBe(201);
    expect(await storedError(acmeRun.body.id)).toBe(`${REDACTED}; signed with ${REDACTED}`);

    const globexRun = await apiClient(app.url, GLOBEX_TOKEN)('POST', '/api/v1/runs', { tenant: 'globex', workflow: 'nightly', status: 'failed', tick: TICK, error: `${CHOSEN} (port 5432)` });
    expect(globexRun.status).toBe(201);
    expect(await storedError(globexRun.body.id)).toBe(`${CHOSEN} (port 5432)`);

    // A log line may quote anyone's text: every secret goes.
    expect(redactSecrets(`retrying: ${CHOSEN}`)).toBe(`retrying: ${REDACTED}`);
  });

  it('stored through another replica, one is redacted here once that replica says so', async () => {
    const secret = 'acme-other-replica-secret-0123456789';
    expect(redactSecrets(`echo ${secret}`, 'acme')).toBe(`echo ${secret}`);
    // Another replica's API: the service writes the row and announces it, this process is told nothing else.
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard = new Promise((resolve) => listener.on('notification', (n) => n.channel === TENANT_SECRETS_CHANNEL && resolve(n)));
    await listener.query(`listen ${TENANT_SECRETS_CHANNEL}`);
    try {
      const deps = { db: t.db, clock, config: loadConfig({ HTTP_LAUNCHER_ALLOWED_HOSTS: 'jobs.example.com' }) };
      const spec = workflowSchema.parse({ tenant: 'acme', name: 'elsewhere', cron: '0 3 * * *', launcher: { kind: 'http', url: 'https://jobs.example.com/x', secret } });
      expect((await putWorkflow(deps, spec, { tenantId: 'acme' })).kind).toBe('created');
      await heard;
      await eventually(() => redactSecrets(`echo ${secret}`, 'acme') === `echo ${REDACTED}`);
      // Still acme's only.
      expect(redactSecrets(`echo ${secret}`, 'globex')).toBe(`echo ${secret}`);
    } finally {
      await listener.end();
    }
  });

  it('a launcher carries at most 32 headers: each value may be a secret every replica holds', async () => {
    const headers = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-api-key-${i}`, `value-number-${i}-0123456789`]));
    const res = await apiClient(app.url, ACME_TOKEN)('PUT', '/api/v1/workflows/acme/many-headers', { cron: '0 2 * * *', launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: ACME_LAUNCH, headers } });
    expect(res.status).toBe(400);
    expect(res.text).toContain('launcher.headers');
    expect(res.text).toContain('at most 32 headers');
    expect(redactSecrets('value-number-32-0123456789', 'acme')).toBe('value-number-32-0123456789');
  });
});
