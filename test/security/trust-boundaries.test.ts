import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { createLogger } from '../../src/log.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { callbackTokenFor, verifyLaunchSignature } from '../../src/launch/signature.js';
import { hashToken } from '../../src/secrets.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { finishedRun } from '../runs/support.js';

/** The problems the operator's file is refused with (it must be refused). */
function fileProblems(file: string): string[] {
  try {
    parseWorkflowsFile(file, 'workflows.json', {});
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowsFileError);
    return (error as WorkflowsFileError).problems;
  }
  throw new Error('the file was accepted');
}

/**
 * The attacks of issue 12 (the API, launcher and secret side), each tried as
 * a tenant would and asserted to fail closed: the status and its reason, and
 * that nothing ran, nothing was stored, nothing reached Slack or the log.
 */

const ADMIN = 'admin-token-trust-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-trust-token-0123456789abcdef';
const GLOBEX_TOKEN = 'sbt_globex-trust-token-0123456789abcd';
const BOT_TOKEN = 'xoxb-trust-bot-token-0123456789';
const SIGNING_SECRET = 'trust-signing-secret-0123456789';
const LAUNCHER_SECRET = 'trust-launcher-secret-0123456789';
const ACME_LAUNCH = 'acme-own-launch-secret-0123456789';
const GLOBEX_LAUNCH = 'globex-own-launch-secret-012345678';

let t: TestDatabase;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const clock = new ManualClock(T0);
const lines: string[] = [];
const admin = () => apiClient(app.url, ADMIN);
const acme = () => apiClient(app.url, ACME_TOKEN);
const globex = () => apiClient(app.url, GLOBEX_TOKEN);

beforeAll(async () => {
  t = await createTestDatabase();
  slack = await RecordingSlackApi.start({ clock });
  target = await startHttpTarget();
  // acme may name ACME_* variables and reach "localhost" by name; globex may reach 127.0.0.1 by address.
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN), secretEnvPrefix: 'ACME_', launcherHosts: JSON.stringify(['localhost']) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN), launcherHosts: JSON.stringify(['127.0.0.1']) });
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  app = await startTestApp(
    t,
    {
      API_TOKEN: ADMIN,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.url,
      PLATFORM_CHANNEL: 'CPLAT',
      LAUNCHER_SECRET,
      HTTP_LAUNCHER_ALLOWED_HOSTS: 'jobs.example.com',
      PING_UNKNOWN_PER_MINUTE: '5',
    },
    { clock, logger: createLogger('trace', sink) },
  );
});
afterAll(async () => {
  await app?.stop();
  await slack?.close();
  await target?.stop();
  await t?.drop();
});

const workflowRow = (tenant: string, name: string) => t.db.selectFrom('workflows').selectAll().where('tenantId', '=', tenant).where('name', '=', name).executeTakeFirst();
const runsOf = async (tenant: string, name: string) => {
  const wf = await workflowRow(tenant, name);
  return wf ? t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).execute() : [];
};

describe('command launchers belong to the operator', () => {
  it('a tenant token sending a command launcher gets 403 with the reason; nothing is stored or run', async () => {
    const res = await acme()('PUT', '/api/v1/workflows/acme/x', {
      cron: '0 0 1 1 *',
      launcher: { kind: 'command', command: "id; tr '\\0' '\\n' < /proc/$PPID/environ" },
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/command.*launchers run on the bot's host.*workflows file or the admin token/);
    expect(await workflowRow('acme', 'x')).toBeUndefined();
    expect((await acme()('POST', '/api/v1/workflows/acme/x/run')).status).toBe(404);
  });

  it('a tenant cannot change or remove a launcher the operator set; the admin can set one and the tenant may run it', async () => {
    const set = await admin()('PUT', '/api/v1/workflows/acme/operator-job', { cron: '0 3 * * *', mode: 'observed', launcher: { kind: 'command', command: 'echo operator' } });
    expect(set.status).toBe(201);
    const before = await workflowRow('acme', 'operator-job');
    expect(before!.launcher).toMatchObject({ kind: 'command', operatorSet: true });

    const replace = await acme()('PUT', '/api/v1/workflows/acme/operator-job', { cron: '0 3 * * *', launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: ACME_LAUNCH } });
    expect(replace.status).toBe(403);
    expect(replace.body.message).toMatch(/launcher the operator set; only the operator/);
    const strip = await acme()('PUT', '/api/v1/workflows/acme/operator-job', { cron: '* * * * *' });
    expect(strip.status).toBe(403);
    const remove = await acme()('DELETE', '/api/v1/workflows/acme/operator-job');
    expect(remove.status).toBe(403);
    expect(await workflowRow('acme', 'operator-job')).toEqual(before);
  });
});

describe("a tenant's http launcher reaches only what the operator allows", () => {
  it.each([
    ['http://127.0.0.1:9/x', '127.0.0.1'],
    ['http://[::1]:9/x', '[::1]'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://10.1.2.3/x', '10.1.2.3'],
    ['https://evil.example.net/x', 'evil.example.net'],
  ])('%s is refused (403) naming the host', async (url, host) => {
    const res = await acme()('PUT', '/api/v1/workflows/acme/ssrf', { cron: '0 0 1 1 *', launcher: { kind: 'http', url, headers: { 'metadata-flavor': 'Google' } } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain(`host ${JSON.stringify(host)} is not on the operator's allow-list for tenant acme`);
    expect(await workflowRow('acme', 'ssrf')).toBeUndefined();
  });

  it('an allowed name is accepted; an allowed name that resolves to loopback is refused at connect time and the target hears nothing', async () => {
    expect((await acme()('PUT', '/api/v1/workflows/acme/allowed', { cron: '0 0 1 1 *', launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: ACME_LAUNCH } })).status).toBe(201);
    const port = new URL(target.url).port;
    const put = await acme()('PUT', '/api/v1/workflows/acme/rebind', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `http://localhost:${port}/run`, secret: ACME_LAUNCH } });
    expect(put.status).toBe(201);
    const before = target.received.length;
    const started = await acme()('POST', '/api/v1/workflows/acme/rebind/run');
    expect(started.status).toBe(202);
    const done = await finishedRun(t.db, started.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^launch refused: localhost resolves to (127\.0\.0\.1|::1), a non-public address the operator has not allowed \(permanent: not retried\)$/);
    expect(done.logExcerpt).toBeNull();
    expect(target.received.length).toBe(before);
  });

  it('a launcher row without the operator mark (set before this check existed) to a loopback literal is not launched', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'legacy', cron: '0 0 1 1 *', mode: 'observed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}/legacy`, mode: 'sync' }) });
    const before = target.received.length;
    const started = await acme()('POST', `/api/v1/workflows/acme/${wf.name}/run`);
    const done = await finishedRun(t.db, started.body.id);
    expect(done).toMatchObject({ status: 'failed', error: "launch refused: host 127.0.0.1 is not on the operator's allow-list for tenant acme (permanent: not retried)" });
    expect(target.received.length).toBe(before);
  });

  it('redirects are not followed: a 302 is the answer, and its target hears nothing', async () => {
    let hits = 0;
    const redirector: Server = createServer((req, res) => {
      hits++;
      res.writeHead(302, { location: `${target.url}/internal` }).end('moved');
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/run`;
      expect((await globex()('PUT', '/api/v1/workflows/globex/redirected', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url, secret: GLOBEX_LAUNCH } })).status).toBe(201);
      const before = target.received.length;
      const started = await globex()('POST', '/api/v1/workflows/globex/redirected/run');
      const done = await finishedRun(t.db, started.body.id);
      expect(done).toMatchObject({ status: 'failed', error: `HTTP 302: redirect to ${target.url}/internal not followed (launchers never follow redirects: set the url to where it points; permanent: not retried)`, logExcerpt: 'moved' });
      expect(hits).toBe(1);
      expect(target.received.length).toBe(before);
    } finally {
      redirector.close();
    }
  });
});

describe("LAUNCHER_SECRET signs only the operator's launchers", () => {
  // Were a tenant's target sent requests signed with the operator's key, the tenant would hold requests valid
  // under it and could replay them (within 5 minutes) to another tenant's target that trusts that key.
  const signedWith = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
    verifyLaunchSignature(secret, { body: r.body, timestamp: r.headers['x-scheduler-timestamp'] as string, signature: r.headers['x-scheduler-signature'] as string }, clock.now()).ok;

  it('a tenant token must give its launcher a secret of its own (403 naming the field); with one, the request is signed with it, never with LAUNCHER_SECRET', async () => {
    const bare = await globex()('PUT', '/api/v1/workflows/globex/unsigned', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `${target.url}/unsigned` } });
    expect(bare.status).toBe(403);
    expect(bare.body.message).toMatch(/^body\.launcher\.secret: a tenant's http launcher needs a signing secret of its own/);
    expect(await workflowRow('globex', 'unsigned')).toBeUndefined();

    expect((await globex()('PUT', '/api/v1/workflows/globex/own-key', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `${target.url}/own-key`, secret: GLOBEX_LAUNCH } })).status).toBe(201);
    const started = await globex()('POST', '/api/v1/workflows/globex/own-key/run');
    expect(started.status).toBe(202);
    expect(await finishedRun(t.db, started.body.id)).toMatchObject({ status: 'succeeded' });
    const request = target.received.find((r) => r.url === '/own-key')!;
    expect(signedWith(GLOBEX_LAUNCH, request)).toBe(true);
    expect(signedWith(LAUNCHER_SECRET, request)).toBe(false);
    expect(JSON.parse(request.body).callbackToken).not.toBe(callbackTokenFor(LAUNCHER_SECRET, started.body.id));
  });

  it('a tenant launcher stored without a secret (before this check) is not launched, and a callback token made with LAUNCHER_SECRET finishes none of its runs', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'globex', name: 'legacy-unsigned', cron: '0 0 1 1 *', mode: 'observed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}/legacy-unsigned`, mode: 'callback' }) });
    const before = target.received.length;
    const started = await globex()('POST', `/api/v1/workflows/globex/${wf.name}/run`);
    expect(started.status).toBe(202);
    const done = await finishedRun(t.db, started.body.id);
    expect(done).toMatchObject({ status: 'failed' });
    expect(done.error).toMatch(/no signing secret of its own: a launcher set with a tenant token needs "secret" or "secretEnv"/);
    expect(target.received.length).toBe(before);

    // Authentication refuses it before the run is even looked at (it was accepted, then answered 409 already_finished).
    const forged = await apiClient(app.url, callbackTokenFor(LAUNCHER_SECRET, started.body.id))('POST', `/api/v1/runs/${started.body.id}`, { status: 'succeeded' });
    expect(forged.status).toBe(401);
  });

  it("the operator's launchers (admin token) are still signed with LAUNCHER_SECRET", async () => {
    expect((await admin()('PUT', '/api/v1/workflows/globex/operator-signed', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url: `${target.url}/operator-signed` } })).status).toBe(201);
    const started = await globex()('POST', '/api/v1/workflows/globex/operator-signed/run');
    expect(await finishedRun(t.db, started.body.id)).toMatchObject({ status: 'succeeded' });
    expect(signedWith(LAUNCHER_SECRET, target.received.find((r) => r.url === '/operator-signed')!)).toBe(true);
  });
});

describe('secretEnv names only variables the operator reserved for the tenant', () => {
  it('outside the prefix: the same 403 whether the variable exists or not', async () => {
    process.env.ACME_PRESENT_SECRET = 'acme-present-secret-0123456789';
    try {
      const put = (secretEnv: string, who = acme(), tenant = 'acme') =>
        who('PUT', `/api/v1/workflows/${tenant}/signed`, { cron: '0 0 1 1 *', launcher: { kind: 'http', url: 'https://jobs.example.com/run', secretEnv } });
      const existing = await put('API_TOKEN');
      const missing = await put('NO_SUCH_VARIABLE_AT_ALL');
      const path = await put('PATH');
      for (const r of [existing, missing, path]) expect(r.status).toBe(403);
      expect(existing.body.message).toBe('body.launcher.secretEnv: tenant acme may name only variables starting with ACME_');
      expect(missing.body).toEqual(existing.body);
      expect(path.body).toEqual(existing.body);
      // Inside its own prefix a tenant may learn what it set up itself.
      expect((await put('ACME_UNSET_SECRET')).status).toBe(400);
      expect((await put('ACME_PRESENT_SECRET')).status).toBe(201);
      const noPrefix = await put('GLOBEX_ANYTHING', globex(), 'globex');
      expect(noPrefix.status).toBe(403);
      expect(noPrefix.body.message).toMatch(/no environment prefix is reserved for tenant globex/);
      expect(await workflowRow('globex', 'signed')).toBeUndefined();
    } finally {
      delete process.env.ACME_PRESENT_SECRET;
    }
  });
});

describe('ping keys', () => {
  it('a tenant cannot choose one (403, so it cannot probe another tenant\'s); a generated one has at least 128 bits', async () => {
    const acmeKey = 'acme-chosen-key-0123456789abc';
    await makeWorkflow(t.db, { tenantId: 'acme', name: 'keyed', cron: '0 2 * * *', pingKey: acmeKey });
    const probe = await globex()('PUT', '/api/v1/workflows/globex/probe', { cron: '0 2 * * *', pingKey: acmeKey });
    const fresh = await globex()('PUT', '/api/v1/workflows/globex/probe', { cron: '0 2 * * *', pingKey: 'globex-never-used-key-0123456' });
    expect(probe.status).toBe(403);
    expect(probe.body).toEqual(fresh.body);
    expect(probe.text).not.toContain('ping_key_taken');
    const generated = await globex()('PUT', '/api/v1/workflows/globex/probe', { cron: '0 2 * * *' });
    expect(generated.status).toBe(201);
    const key = (await workflowRow('globex', 'probe'))!.pingKey;
    expect(key).toMatch(/^[A-Za-z0-9_-]{22,}$/);
  });

  it("the operator's file refuses a chosen key shorter than 22 characters, naming path and value", () => {
    const file = JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'w', cron: '0 2 * * *', pingKey: 'AAAAAAAAAAAAAAAA' }] });
    expect(fileProblems(file)).toEqual([expect.stringMatching(/^workflows\.json:1: workflows\[0\]\.pingKey: at least 22 .*\(got "AAAAAAAAAAAAAAAA"\)$/)]);
  });

  it("a working key is never repeated in a problem of the file (given to two entries): it is the credential every ping carries", () => {
    const key = 'Fixed-Key-0123456789abcdefXYZ';
    const entry = (name: string) => ({ tenant: 'acme', name, cron: '0 2 * * *', pingKey: key });
    const file = JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [entry('a'), entry('b')] });
    const problems = fileProblems(file);
    expect(problems).toEqual([expect.stringMatching(/^workflows\.json:1: workflows\[1\]\.pingKey: ping key already given to workflows\[0\]; each workflow needs its own \(got "\(hidden\)"\)$/)]);
    expect(problems.join('\n')).not.toContain(key);
  });

  it('unknown keys from one address are rate-limited (429 + Retry-After); over the limit a valid key is told apart from a guess only when the address has used it before', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'pinged', cron: '0 2 * * *' });
    const other = await makeWorkflow(t.db, { tenantId: 'acme', name: 'pinged-too', cron: '0 3 * * *' });
    expect((await fetch(`${app.url}/ping/${wf.pingKey}`)).status).toBe(200);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 7; i++) {
      last = await fetch(`${app.url}/ping/guess-${i}-0123456789abcdefghij/fail`);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await last!.text()).toMatch(/too many unknown ping keys/);
    // The job that pinged from here before is never slowed by its neighbour's guessing.
    expect((await fetch(`${app.url}/ping/${wf.pingKey}`)).status).toBe(200);
    // A valid key this address has not shown before gets the guess's answer: 200 against 429 would be an oracle at any speed.
    const unproven = await fetch(`${app.url}/ping/${other.pingKey}`);
    expect(unproven.status).toBe(429);
    expect((await runsOf('acme', 'pinged-too')).length).toBe(0);
    clock.advance(60_000);
    expect((await fetch(`${app.url}/ping/${other.pingKey}`)).status).toBe(200);
    expect((await fetch(`${app.url}/ping/guess-after-0123456789abcdefghij`)).status).toBe(404);
  });
});

describe('secrets never leave', () => {
  it('a run whose output carries the configured secrets is stored, shown, logged and posted redacted', async () => {
    const minted = await admin()('POST', '/api/v1/tenants/globex/token');
    const webhookSecret = 'webhook-secret-trust-0123456789';
    const routingKey = 'R0UTINGKEYTRUST0123456789ABCDEF';
    const tenant = await admin()('PUT', '/api/v1/tenants/initech', {
      name: 'Initech',
      channel: 'CINITECH',
      destinations: [
        { kind: 'webhook', url: 'https://hooks.example.com/x', secret: webhookSecret },
        { kind: 'pagerduty', routingKey },
      ],
    });
    expect(tenant.status).toBe(201);
    const launcherOwn = 'per-launcher-secret-trust-0123456';
    expect((await admin()('PUT', '/api/v1/workflows/acme/leaky', { cron: '0 2 * * *', policy: { retries: 0 }, launcher: { kind: 'http', url: 'https://jobs.example.com/run', secret: launcherOwn, headers: { authorization: 'Bearer header-credential-0123456789' } } })).status).toBe(201);
    const secrets = [ADMIN, ACME_TOKEN, minted.body.token as string, BOT_TOKEN, SIGNING_SECRET, LAUNCHER_SECRET, webhookSecret, routingKey, launcherOwn, 'header-credential-0123456789'];
    const leak = `connect failed; env: ${secrets.map((s, i) => `S${i}=${s}`).join(' ')}`;

    const report = await acme()('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'leaky', status: 'failed', tick: T0.toISOString(), error: leak, stage: `stage ${BOT_TOKEN}`, log: `line\n${leak}\n` });
    expect(report.status).toBe(201);
    const run = await t.db.selectFrom('runs').selectAll().where('id', '=', report.body.id).executeTakeFirstOrThrow();
    const view = await acme()('GET', '/api/v1/workflows/acme/leaky');
    await pollFinishedRuns(app.deps);
    await deliverAll();
    const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', run.workflowId).executeTakeFirstOrThrow();
    const events = await t.db.selectFrom('alertEvents').selectAll().where('alertId', '=', alert.id).execute();
    const notifications = await t.db.selectFrom('notifications').selectAll().where('alertId', '=', alert.id).execute();
    const posted = JSON.stringify(slack.calls);
    expect(slack.roots('CACME').length).toBeGreaterThan(0);

    const everywhere = { run: JSON.stringify(run), view: view.text, alert: JSON.stringify(alert), events: JSON.stringify(events), notifications: JSON.stringify(notifications), posted, logs: lines.join('') };
    for (const [where, text] of Object.entries(everywhere)) {
      for (const secret of secrets) expect(text.includes(secret), `${where} leaks ${secret.slice(0, 6)}…`).toBe(false);
    }
    expect(run.error).toContain('S0=[redacted]');
    expect(run.error).toContain('S9=[redacted]');
  });
});

describe('a password in a launcher URL', () => {
  it("is a secret: the tenant's view shows it as [redacted], and a target's answer or a log line carrying it is redacted", async () => {
    const password = 'url-basic-pass-0123456789';
    target.respondWith((r) => (r.url === '/basic' ? { status: 500, body: `auth failed for http://ci:${password}@127.0.0.1/basic` } : { status: 200 }));
    try {
      const url = `http://ci:${password}@127.0.0.1:${new URL(target.url).port}/basic`;
      expect((await admin()('PUT', '/api/v1/workflows/acme/basic-auth', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url } })).status).toBe(201);
      const view = await acme()('GET', '/api/v1/workflows/acme/basic-auth');
      expect(view.body.launcher.url).toBe(`http://ci:[redacted]@127.0.0.1:${new URL(target.url).port}/basic`);
      expect(view.text).not.toContain(password);
      const started = await acme()('POST', '/api/v1/workflows/acme/basic-auth/run');
      const done = await finishedRun(t.db, started.body.id);
      expect(done).toMatchObject({ status: 'failed', error: 'HTTP 500: auth failed for http://ci:[redacted]@127.0.0.1/basic' });
      expect(JSON.stringify(done)).not.toContain(password);
      expect(lines.join('')).not.toContain(password);
    } finally {
      target.respondWith(() => ({ status: 200 }));
    }
  });
});

describe('a credential in a launcher URL\'s query', () => {
  it("(a CI trigger's ?token=) is a secret: the tenant's view shows it as [redacted], and a target's answer or a log line carrying it is redacted", async () => {
    const token = 'ci-trigger-token-0123456789';
    target.respondWith((r) => (r.url?.startsWith('/trigger') ? { status: 500, body: `bad trigger: ref=main&token=${token}` } : { status: 200 }));
    try {
      const url = `http://127.0.0.1:${new URL(target.url).port}/trigger?ref=main&token=${token}`;
      expect((await admin()('PUT', '/api/v1/workflows/acme/ci-trigger', { cron: '0 0 1 1 *', mode: 'observed', launcher: { kind: 'http', url } })).status).toBe(201);
      const view = await acme()('GET', '/api/v1/workflows/acme/ci-trigger');
      expect(view.body.launcher.url).toBe(`http://127.0.0.1:${new URL(target.url).port}/trigger?ref=main&token=[redacted]`);
      expect(view.text).not.toContain(token);
      const started = await acme()('POST', '/api/v1/workflows/acme/ci-trigger/run');
      const done = await finishedRun(t.db, started.body.id);
      expect(done).toMatchObject({ status: 'failed', error: 'HTTP 500: bad trigger: ref=main&token=[redacted]' });
      expect(JSON.stringify(done)).not.toContain(token);
      expect(lines.join('')).not.toContain(token);
    } finally {
      target.respondWith(() => ({ status: 200 }));
    }
  });
});

async function deliverAll() {
  const client = createWebClient(BOT_TOKEN, { apiUrl: slack.url, timeoutMs: 2000, logger: app.deps.logger });
  const sender = createOutboxSender(app.deps, [slackTransport(app.deps, webOutboxApi(client))]);
  for (let i = 0; i < 200; i++) {
    if (!(await sender.tick())) {
      const left = await t.db.selectFrom('notifications').select('id').where('status', 'in', ['pending', 'sending']).where('destination', 'like', 'slack:%').execute();
      if (left.length === 0) return;
      clock.advance(1000);
    }
  }
  throw new Error('outbox did not drain');
}

