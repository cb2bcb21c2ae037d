import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock.js';
import { parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import { createDb, createPool } from '../../src/db/connect.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { createLogger } from '../../src/log.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { hashToken } from '../../src/secrets.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { LIMITS } from '../../src/slack/blocks/limits.js';
import { ACTION, REASSIGN_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { startBot } from '../helpers/process.js';
import { slackSignature } from '../helpers/slack-bolt.js';
import { addEvent, insertAlert } from '../helpers/slack-outbox.js';
import { eventually, fingerprint } from './support.js';

/**
 * The bad-input catalogue: hostile or broken requests to every edge. Each
 * case asserts the answer (status and words) and that neither the database
 * nor the Slack server changed. Error texts from runs are the exception: they
 * are recorded, and the case asserts they reach Slack defused and cut to fit.
 */

const SECRET = 'bad-input-signing-secret-0123456789';
const ADMIN = 'admin-token-0123456789abcdef';
const ACME_TOKEN = 'sbt_acme-token-0123456789abcdef';
const GLOBEX_TOKEN = 'sbt_globex-token-0123456789abcdef';
const ACME_PING = 'acme-ping-key-0123456789';

let t: TestDatabase;
let slack: RecordingSlackApi;
let app: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(T0);
const lines: string[] = [];
let acmeAlert: number;
let globexAlert: number;

beforeAll(async () => {
  t = await createTestDatabase();
  slack = await RecordingSlackApi.start({ clock });
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(ACME_TOKEN) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', apiTokenHash: hashToken(GLOBEX_TOKEN) });
  const acme = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *', pingKey: ACME_PING });
  const globex = await makeWorkflow(t.db, { tenantId: 'globex', name: 'import', cron: '0 2 * * *' });
  // Every log line at trace level, through the production logger's redaction.
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  app = await startTestApp(
    t,
    { API_TOKEN: ADMIN, SLACK_BOT_TOKEN: 'xoxb-bad-input-token', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: slack.url, PLATFORM_CHANNEL: 'CPLAT' },
    { clock, logger: createLogger('trace', sink) },
  );
  acmeAlert = (await insertAlert(t.db, acme.id)).id;
  globexAlert = (await insertAlert(t.db, globex.id)).id;
  await addEvent(t.db, acmeAlert, 'opened', { now: T0, platformChannel: 'CPLAT' });
  await addEvent(t.db, globexAlert, 'opened', { now: T0, platformChannel: 'CPLAT' });
  await deliverAll();
});
afterAll(async () => {
  await app?.stop();
  await slack?.close();
  await t?.drop();
});

async function deliverAll() {
  const client = createWebClient('xoxb-bad-input-token', { apiUrl: slack.url, timeoutMs: 2000, logger: app.deps.logger });
  const sender = createOutboxSender(app.deps, [slackTransport(app.deps, webOutboxApi(client))]);
  for (let i = 0; i < 200; i++) {
    if (!(await sender.tick())) {
      const left = await t.db.selectFrom('notifications').select('id').where('status', 'in', ['pending', 'sending']).execute();
      if (left.length === 0) return;
      clock.advance(1000);
    }
  }
  throw new Error('outbox did not drain');
}

/** Posts to /slack/events, signed as Slack signs unless told otherwise. */
async function toSlack(body: string, contentType: string, sign: { secret?: string; ageSeconds?: number; omit?: boolean } = {}) {
  const ts = Math.floor(systemClock.now().getTime() / 1000) - (sign.ageSeconds ?? 0);
  const headers: Record<string, string> = { 'content-type': contentType };
  if (!sign.omit) {
    headers['x-slack-request-timestamp'] = String(ts);
    headers['x-slack-signature'] = slackSignature(sign.secret ?? SECRET, ts, body);
  }
  const res = await fetch(`${app.url}/slack/events`, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text(), headers: { ts: headers['x-slack-request-timestamp'], sig: headers['x-slack-signature'] } };
}

let seq = 0;
function clickBody(actionId: string, value: string, channel: string, user = 'U0MALLORY') {
  const n = ++seq;
  const payload = {
    type: 'block_actions',
    team: { id: 'T0TEST', domain: 'example' },
    user: { id: user, username: 'mallory', team_id: 'T0TEST' },
    api_app_id: 'A0TEST',
    token: 'legacy',
    container: { type: 'message', message_ts: '1.0', channel_id: channel, is_ephemeral: false },
    trigger_id: `trigger-${n}`,
    channel: { id: channel, name: 'alerts' },
    message: { type: 'message', ts: '1.0', text: 'root' },
    response_url: slack.responseUrl(`bad${n}`),
    actions: [{ action_id: actionId, block_id: 'alert_actions', action_ts: `${n}.0`, type: 'button', value }],
  };
  return { id: `bad${n}`, body: new URLSearchParams({ payload: JSON.stringify(payload) }).toString() };
}

function reassignSubmission(privateMetadata: string, team = 'engineering', note: string | null = 'taking this') {
  const payload = {
    type: 'view_submission',
    team: { id: 'T0TEST' },
    user: { id: 'U0MALLORY' },
    api_app_id: 'A0TEST',
    view: {
      id: 'V1',
      callback_id: VIEW.reassign,
      private_metadata: privateMetadata,
      state: {
        values: {
          [REASSIGN_FIELD.team.block]: { [REASSIGN_FIELD.team.action]: { type: 'static_select', selected_option: { value: team } } },
          [REASSIGN_FIELD.user.block]: { [REASSIGN_FIELD.user.action]: { type: 'users_select', selected_user: 'U0MALLORY' } },
          [REASSIGN_FIELD.note.block]: { [REASSIGN_FIELD.note.action]: { type: 'plain_text_input', value: note } },
        },
      },
    },
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

const responseFor = (id: string) =>
  eventually(() => {
    const r = slack.responses.find((x) => x.id === id);
    if (!r) throw new Error(`no response ${id} yet`);
    return r.body;
  });

/**
 * Waits until the app has worked through what was sent before, with no fixed
 * sleep: a signed `/scheduler help` (which changes nothing) sent after it is
 * answered. A request still doing work behind its ack would have had as long.
 */
let barriers = 0;
async function settle() {
  const id = `barrier-${++barriers}`;
  const body = new URLSearchParams({ team_id: 'T0TEST', channel_id: 'CACME', user_id: 'U0MALLORY', command: '/scheduler', text: 'help', response_url: slack.responseUrl(id), trigger_id: 't' }).toString();
  expect((await toSlack(body, 'application/x-www-form-urlencoded')).status).toBe(200);
  await responseFor(id);
}

/** Runs `act`, then asserts the database and the Slack server are exactly as before. */
async function unchanged<T>(act: () => Promise<T>): Promise<T> {
  const before = await fingerprint(t.db, slack);
  const result = await act();
  await settle();
  expect(await fingerprint(t.db, slack)).toEqual(before);
  return result;
}

describe('Slack requests', () => {
  const command = () =>
    new URLSearchParams({ team_id: 'T0TEST', channel_id: 'CACME', user_id: 'U0MALLORY', command: '/scheduler', text: 'ack nightly', response_url: slack.responseUrl('cmd'), trigger_id: 't' }).toString();
  const form = 'application/x-www-form-urlencoded';

  it('no signature: 401, nothing changed', async () => {
    const res = await unchanged(() => toSlack(command(), form, { omit: true }));
    expect(res.status).toBe(401);
    expect(slack.responses.filter((r) => r.id === 'cmd')).toHaveLength(0);
  });

  it('a signature made with the wrong secret: 401, nothing changed', async () => {
    const res = await unchanged(() => toSlack(command(), form, { secret: 'not-the-secret-at-all-0000' }));
    expect(res.status).toBe(401);
  });

  it('a stale signature (6 minutes old, replayed later): 401, nothing changed', async () => {
    const res = await unchanged(() => toSlack(command(), form, { ageSeconds: 6 * 60 }));
    expect(res.status).toBe(401);
  });

  it('a body altered after signing: 401, nothing changed', async () => {
    const ts = Math.floor(Date.now() / 1000);
    const res = await unchanged(async () => {
      const r = await fetch(`${app.url}/slack/events`, {
        method: 'POST',
        headers: { 'content-type': form, 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(SECRET, ts, command()) },
        body: command().replace('ack', 'run'),
      });
      return r.status;
    });
    expect(res).toBe(401);
  });

  it('a replayed take-ownership click is refused (401) and changes nothing the second time', async () => {
    const click = clickBody(ACTION.takeOwnership, String(acmeAlert), 'CACME', 'U0ALICE');
    const first = await toSlack(click.body, form);
    expect(first.status).toBe(200);
    await eventually(async () => expect((await t.db.selectFrom('alerts').select('ownerUser').where('id', '=', acmeAlert).executeTakeFirstOrThrow()).ownerUser).toBe('U0ALICE'));
    await deliverAll();
    // The very same bytes, signature and timestamp again, inside the 5-minute window.
    const replay = await unchanged(async () => {
      const r = await fetch(`${app.url}/slack/events`, {
        method: 'POST',
        headers: { 'content-type': form, 'x-slack-request-timestamp': first.headers.ts!, 'x-slack-signature': first.headers.sig! },
        body: click.body,
      });
      await settle();
      await deliverAll();
      return r.status;
    });
    expect(replay).toBe(401);
    const events = await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', acmeAlert).where('kind', '=', 'owner_changed').execute();
    expect(events).toHaveLength(1);
  });

  it("block_actions naming another tenant's alert: refused with words, nothing changed", async () => {
    const click = clickBody(ACTION.takeOwnership, String(globexAlert), 'CACME');
    const res = await unchanged(async () => {
      const r = await toSlack(click.body, form);
      await responseFor(click.id);
      return r;
    });
    expect(res.status).toBe(200);
    expect(await responseFor(click.id)).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining("can't find that alert") });
  });

  it('block_actions whose value is not an alert id: refused with words, nothing changed', async () => {
    const click = clickBody(ACTION.silence, "1; drop table alerts; --", 'CACME');
    await unchanged(async () => {
      expect((await toSlack(click.body, form)).status).toBe(200);
      await responseFor(click.id);
    });
    expect((await responseFor(click.id)).text).toContain('does not name an alert');
  });

  it('forged private_metadata that is not JSON: the modal shows an error, nothing changed', async () => {
    const res = await unchanged(() => toSlack(reassignSubmission('{"alertId":'), form));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ response_action: 'errors', errors: { team: expect.stringContaining('private_metadata is not what the modal was opened with') } });
  });

  it("forged private_metadata naming another tenant's alert from a tenant channel: refused, nothing changed", async () => {
    const res = await unchanged(() => toSlack(reassignSubmission(JSON.stringify({ alertId: globexAlert, channel: 'CACME' }), 'customer', 'mine now'), form));
    expect(res.status).toBe(200);
    const told = await eventually(() => {
      const call = slack.callsTo('chat.postEphemeral').at(-1);
      if (!call) throw new Error('no answer yet');
      return call;
    });
    expect(told.text).toContain("can't find that alert");
  });

  it('forged private_metadata that drops the channel (as if opened from the App Home): refused, nothing changed', async () => {
    const res = await unchanged(() => toSlack(reassignSubmission(JSON.stringify({ alertId: globexAlert, channel: null }), 'customer', 'mine now'), form));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ response_action: 'errors', errors: { team: expect.stringContaining('private_metadata is not what the modal was opened with') } });
  });

  it('a malformed payload (not JSON): 400, nothing changed', async () => {
    const res = await unchanged(() => toSlack('payload=%7Bnot-json', form));
    expect(res.status).toBe(400);
  });

  it('a signed block_actions with "user": null is refused before Bolt reads it: 400 naming the field, nothing changed', async () => {
    const click = clickBody(ACTION.takeOwnership, String(acmeAlert), 'CACME');
    const payload = JSON.parse(new URLSearchParams(click.body).get('payload')!) as Record<string, unknown>;
    const res = await unchanged(() => toSlack(new URLSearchParams({ payload: JSON.stringify({ ...payload, user: null }) }).toString(), form));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/^payload\.user: /) });
    const noActions = await unchanged(() => toSlack(new URLSearchParams({ payload: JSON.stringify({ ...payload, actions: 'all' }) }).toString(), form));
    expect(noActions.status).toBe(400);
    expect(JSON.parse(noActions.text).message).toMatch(/^payload\.actions: /);
  });

  it('a slash command without a user: 400, nothing changed', async () => {
    const params = new URLSearchParams(command());
    params.delete('user_id');
    const res = await unchanged(() => toSlack(params.toString(), form));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/^user_id: /);
  });

  it('a timestamp more than 5 minutes in the future, correctly signed: 401, nothing changed', async () => {
    const res = await unchanged(() => toSlack(command(), form, { ageSeconds: -6 * 60 }));
    expect(res.status).toBe(401);
    expect(res.text).toContain('more than 5 minutes from now');
  });

  it('an oversized payload (2 MB of action value): acknowledged, refused with words, nothing changed', async () => {
    const click = clickBody(ACTION.takeOwnership, `${acmeAlert}${'9'.repeat(2 * 1024 * 1024)}`, 'CACME');
    const res = await unchanged(async () => {
      const r = await toSlack(click.body, form);
      await responseFor(click.id);
      return r;
    });
    expect(res.status).toBe(200);
    expect(await responseFor(click.id)).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('does not name an alert') });
  });
});

describe('API requests', () => {
  const report = { tenant: 'acme', workflow: 'nightly', status: 'failed', error: 'boom' };

  it('no token: 401 naming the header, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url)('POST', '/api/v1/runs', report));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: 'missing "Authorization: Bearer <token>" header' });
  });

  it('a wrong token: 401, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url, 'sbt_not-a-real-token-000000')('POST', '/api/v1/runs', report));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: 'invalid token' });
  });

  it("another tenant's token: 404 exactly as if the workflow did not exist, nothing changed", async () => {
    const res = await unchanged(() => apiClient(app.url, GLOBEX_TOKEN)('POST', '/api/v1/runs', report));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: 'workflow acme/nightly not found' });
    const runs = await unchanged(() => apiClient(app.url, GLOBEX_TOKEN)('POST', '/api/v1/workflows/acme/nightly/run', {}));
    expect(runs.status).toBe(404);
  });

  it('invalid JSON: 400 invalid_json, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', '{"tenant": "acme",', { 'content-type': 'application/json' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_json');
    expect(res.body.message).toMatch(/^request body is not valid JSON: /);
  });

  it('JSON that is not an object (null, a number): 400 saying so, not a made-up syntax error; nothing changed', async () => {
    for (const [body, shown] of [['null', 'null'], ['42', '42']] as const) {
      const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', body, { 'content-type': 'application/json' }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_json', message: `request body must be a JSON object (got ${shown})` });
    }
  });

  it('a required field left out: 400 saying it is required, nothing changed', async () => {
    const { tenant: _tenant, status: _status, ...rest } = report;
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', rest));
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual(['body: tenant: required', expect.stringMatching(/^body: status: required: Invalid option: expected one of "running"/)]);
  });

  it('wrong types: 400 naming each field and the value it got, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { ...report, rows: 'many', status: 'exploded' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toMatch(/body: status: Invalid option: .* \(got "exploded"\)/);
    expect(res.body.message).toMatch(/body: rows: Invalid input: expected number, received string \(got "many"\)/);
    expect(res.body.issues).toHaveLength(2);
  });

  it('unknown fields: 400 naming them, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { ...report, severity: 'critical', channel: '<!channel>' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('unknown field "severity", "channel"');
  });

  it('a 10 MB body: 413, nothing changed', async () => {
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { ...report, log: 'x'.repeat(10 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'body_too_large', message: 'request body is larger than 262144 bytes' });
  });

  it('a 10 MB body without a valid token is refused before it is read: 401', async () => {
    const res = await unchanged(() => apiClient(app.url, 'sbt_wrong-000000000000000')('POST', '/api/v1/runs', { ...report, log: 'x'.repeat(10 * 1024 * 1024) }));
    expect(res.status).toBe(401);
  });

  it.each([
    ['a NUL in the path', 'GET', '/api/v1/workflows/acme/night%00ly', /^path: NUL characters/],
    ['bad percent-encoding in the path', 'GET', '/api/v1/workflows/acme/%ZZ', /^path: bad percent-encoding/],
    ['bad percent-encoding in a run id', 'POST', '/api/v1/runs/%E0%A4%A', /^path: bad percent-encoding/],
  ])('%s: 400 with the reason, nothing changed', async (_what, method, path, reason) => {
    const res = await unchanged(() => apiClient(app.url, ACME_TOKEN)(method, path, method === 'POST' ? { status: 'succeeded' } : undefined));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(reason) });
  });

  it('a NUL in a JSON string that names something: 400 naming the field, nothing changed', async () => {
    const acme = apiClient(app.url, ACME_TOKEN);
    const tenant = await unchanged(() => acme('POST', '/api/v1/runs', { tenant: 'acme\u0000', workflow: 'nightly', status: 'failed' }));
    expect(tenant.status).toBe(400);
    expect(tenant.body.message).toBe('body.tenant: NUL characters (\\u0000) are not allowed');
    const external = await unchanged(() => acme('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'running', externalId: 'job\u0000-1' }));
    expect(external.status).toBe(400);
    expect(external.body.message).toContain('body.externalId');
    const command = await unchanged(() => apiClient(app.url, ADMIN)('PUT', '/api/v1/workflows/acme/nul', { cron: '0 2 * * *', launcher: { kind: 'command', command: 'echo\u0000x' } }));
    expect(command.status).toBe(400);
    expect(command.body.message).toContain('body.launcher.command');
  });

  it("a cron cron-parser refuses (L-2, a step of 0, a value out of range): 400 naming the field, the cron's field and its value in plain words, nothing changed", async () => {
    const admin = apiClient(app.url, ADMIN);
    const cases: [string, string, RegExp][] = [
      ['cron', '0 2 L-2 * *', /^body: cron: invalid cron: day of month "L-2": a day counted back from the last \(L-2\) is not supported; the day of month reads 1-31, .*L \(the last day\), LW \(the last weekday\), 15W/],
      ['cron', '5/0 * * * *', /^body: cron: invalid cron: minute "5\/0": a step of 0 \("5\/0"\) never moves on; a step is 1 or more; the minute reads 0-59/],
      ['maintenance[0].cron', '60 * * * *', /^body: maintenance\[0\]\.cron: invalid cron: minute "60": 60 is out of range; the minute reads 0-59/],
    ];
    for (const [field, cron, message] of cases) {
      const body = field === 'cron' ? { cron } : { cron: '0 2 * * *', maintenance: [{ cron, duration: '1h' }] };
      const res = await unchanged(() => admin('PUT', '/api/v1/workflows/acme/bad-cron', body));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
      expect(res.body.message).not.toMatch(/Constraint error|NaN/);
    }
  });

  it('a NUL in a query parameter: 400 naming the parameter, never a 500', async () => {
    const admin = apiClient(app.url, ADMIN);
    for (const path of ['/api/v1/runs?workflow=night%00ly', '/api/v1/runs?tenant=ac%00me', '/api/v1/runs?workflow=a&workflow=b%00']) {
      const res = await unchanged(() => admin('GET', path));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/^query\.(workflow|tenant)(\[1\])?: NUL characters/) });
    }
  });

  it('a lone UTF-16 surrogate in a JSON string stored as jsonb (launcher headers, maintenance reasons): 400 naming the field, never a 500', async () => {
    const admin = apiClient(app.url, ADMIN);
    const cases: [string, string, string, string][] = [
      ['PUT', '/api/v1/workflows/acme/lone-header', '{"cron": "0 2 * * *", "launcher": {"kind": "http", "url": "https://jobs.example.com/run", "headers": {"x-team": "a\\ud800b"}}}', 'body.launcher.headers.x-team'],
      ['PUT', '/api/v1/workflows/acme/lone-window', '{"cron": "0 2 * * *", "maintenance": [{"cron": "0 1 * * *", "duration": "1h", "reason": "\\udc00"}]}', 'body.maintenance[0].reason'],
      ['PUT', '/api/v1/workflows/acme/lone-key', '{"cron": "0 2 * * *", "launcher": {"kind": "http", "url": "https://jobs.example.com/run", "headers": {"x-\\ud800": "v"}}}', 'body.launcher.headers.x-\\ud800'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await unchanged(() => admin(method, path, body, { 'content-type': 'application/json' }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', message: `${field}: a lone UTF-16 surrogate (half a character, such as \\ud800) is not allowed` });
    }
  });

  it.each([
    ['exitCode', { exitCode: 99999999999 }],
    ['exitCode', { exitCode: -99999999999 }],
    ['rows', { rows: 1e300 }],
  ])('an out-of-range %s: 400 naming the field and value, nothing changed', async (field, extra) => {
    const acme = apiClient(app.url, ACME_TOKEN);
    const res = await unchanged(() => acme('POST', '/api/v1/runs/1', { status: 'failed', ...extra }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(new RegExp(`^body: ${field}: Too (big|small): .*\\(got -?[0-9e+]+\\)`));
  });

  it('a ping with an unknown key: 404, a ping body over 10 MB: 413; nothing changed', async () => {
    const unknown = await unchanged(() => fetch(`${app.url}/ping/no-such-key-0000000000/fail`, { method: 'POST', body: 'x' }));
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('not found\n');
    const huge = await unchanged(() => fetch(`${app.url}/ping/${ACME_PING}/fail`, { method: 'POST', body: 'x'.repeat(11 * 1024 * 1024) }).catch((e: Error) => e));
    if (huge instanceof Response) {
      expect(huge.status).toBe(413);
      expect(await huge.text()).toBe('body larger than 10485760 bytes\n');
    } else {
      // The server may close the connection on an upload it will not read to the end.
      expect(huge.message).toMatch(/fetch failed|socket|closed/i);
    }
  });
});

describe('error texts from runs', () => {
  it('mentions, links and control characters reach Slack defused; the run is recorded without NULs', async () => {
    const hostile = 'load failed <!channel> <@U0BOSS> <https://evil.example/login|click to fix> *bold* ```\u0000\u0007\u001b[31mred\u001b[0m end';
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'hostile-error', cron: '0 2 * * *' });
    const res = await apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', tick: T0.toISOString(), error: hostile, log: `line one\n${hostile}` });
    expect(res.status).toBe(201);
    const run = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(run.error).not.toContain('\u0000');
    expect(run.error).toContain('<!channel>');
    await pollFinishedRuns(app.deps);
    await deliverAll();
    const root = slack.roots('CACME').find((m) => m.metadata?.event_payload.workflow === wf.name);
    expect(root).toBeDefined();
    const rendered = `${root!.text}\n${JSON.stringify(root!.blocks)}`;
    expect(rendered).not.toContain('<!channel>');
    expect(rendered).not.toContain('<@U0BOSS>');
    expect(rendered).not.toContain('<https://evil.example');
    expect(rendered).toContain('&lt;!channel&gt;');
    expect(rendered).not.toMatch(/\\u0000/);
  });

  it('1 MB of error text: refused over the API (413); over a ping, kept cut and rendered within Block Kit limits', async () => {
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'huge-error', cron: '0 2 * * *', pingKey: 'huge-error-ping-key-000000' });
    const mb = `${'E'.repeat(1024 * 1024)}\nfinal line <!here>`;
    const api = await unchanged(() => apiClient(app.url, ACME_TOKEN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: wf.name, status: 'failed', error: mb }));
    expect(api.status).toBe(413);

    const ping = await fetch(`${app.url}/ping/huge-error-ping-key-000000/fail`, { method: 'POST', body: mb });
    expect(ping.status).toBe(200);
    const run = await t.db.selectFrom('runs').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
    expect(run.logExcerpt!.length).toBeLessThan(110 * 1024);
    expect(run.logExcerpt).toContain('[… truncated:');
    expect(run.error!.length).toBeLessThanOrEqual(600);
    await pollFinishedRuns(app.deps);
    await deliverAll();
    for (const m of slack.messages().filter((x) => x.metadata?.event_payload.workflow === wf.name)) {
      expect(m.text.length).toBeLessThanOrEqual(LIMITS.fallbackText);
      expect(m.blocks!.length).toBeLessThanOrEqual(LIMITS.messageBlocks);
      for (const b of m.blocks as { text?: { text: string } }[]) if (b.text) expect(b.text.text.length).toBeLessThanOrEqual(LIMITS.sectionText);
      expect(JSON.stringify(m.blocks)).not.toContain('<!here>');
    }
  });
});

describe('workflows files', () => {
  const file = (workflows: unknown[]) =>
    JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows }, null, 2);

  it('invalid cron, unknown time zone and a duplicate name: every problem named with its line and value; the bot refuses to start and writes nothing', async () => {
    const text = file([
      { tenant: 'acme', name: 'a', cron: '61 * * * *' },
      { tenant: 'acme', name: 'b', cron: '0 2 * * *', timezone: 'Mars/Olympus_Mons' },
      { tenant: 'acme', name: 'a', cron: '0 3 * * *' },
    ]);
    let error: WorkflowsFileError | undefined;
    try {
      parseWorkflowsFile(text, 'bad.json');
    } catch (e) {
      error = e as WorkflowsFileError;
    }
    expect(error).toBeInstanceOf(WorkflowsFileError);
    const line = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    expect(error!.problems).toEqual([
      expect.stringMatching(new RegExp(`^bad\\.json:${line('61 * * * *')}: workflows\\[0\\]\\.cron: invalid cron: .* \\(got "61 \\* \\* \\* \\*"\\)$`)),
      `bad.json:${line('Mars/Olympus_Mons')}: workflows[1].timezone: not an IANA time zone (such as "Europe/Berlin" or "UTC") (got "Mars/Olympus_Mons")`,
      expect.stringMatching(/^bad\.json:\d+: workflows\[2\]\.name: duplicate workflow name in tenant "acme" \(got "a"\)$/),
    ]);

    const dir = await mkdtemp(join(tmpdir(), 'sb-bad-file-'));
    try {
      await writeFile(join(dir, 'workflows.json'), text);
      const before = await fingerprint(t.db, slack);
      const bot = startBot({ DATABASE_URL: t.url, WORKFLOWS_FILE: join(dir, 'workflows.json'), PORT: '0', LOG_LEVEL: 'info' });
      expect(await bot.exited).toBe(2);
      expect(bot.output()).toContain('workflows[1].timezone: not an IANA time zone');
      expect(await fingerprint(t.db, slack)).toEqual(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('300 workflows are validated and synced, and a second sync changes none of them', async () => {
    const db = await createTestDatabase(2);
    try {
      const workflows = Array.from({ length: 300 }, (_, i) => ({ tenant: 'acme', name: `job-${i}`, cron: `${i % 60} ${i % 24} * * *`, timezone: i % 2 ? 'Europe/Berlin' : 'UTC' }));
      const parsed = parseWorkflowsFile(file(workflows));
      expect(parsed.workflows).toHaveLength(300);
      const first = await syncWorkflowsFile(db.db, parsed, T0);
      expect(first.workflows).toEqual({ created: 300, updated: 0, unchanged: 0, removed: 0, changed: [] });
      const keys = await db.db.selectFrom('workflows').select(['pingKey', 'nextTickAt']).orderBy('id').execute();
      const second = await syncWorkflowsFile(db.db, parsed, T0);
      expect(second.workflows).toEqual({ created: 0, updated: 0, unchanged: 300, removed: 0, changed: [] });
      expect(await db.db.selectFrom('workflows').select(['pingKey', 'nextTickAt']).orderBy('id').execute()).toEqual(keys);
    } finally {
      await db.drop();
    }
    // The same at 10,000 workflows: test/reliability/large-workflows-file.slow.test.ts (npm run test:slow).
  }, 120_000);
});

describe('logs', () => {
  it('never contain an API token, a tenant token, a ping key or the Slack token, even when a request fails inside', async () => {
    // A replica whose database is unreachable: every ping and API call fails inside and is logged.
    const broken = createDb(createPool('postgres://nobody@127.0.0.1:1/nothing', 1));
    const down = await startTestApp({ db: broken, url: 'postgres://nobody@127.0.0.1:1/nothing' }, { API_TOKEN: ADMIN }, { clock, logger: createLogger('trace', new Writable({ write: (c, _e, d) => (lines.push(String(c)), d()) })) });
    try {
      for (const base of [app.url, down.url]) {
        await fetch(`${base}/ping/${ACME_PING}/fail`, { method: 'POST', body: 'oops' });
        await fetch(`${base}/ping/${ACME_PING}/start?rid=r1`);
        await apiClient(base, ACME_TOKEN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'running' });
        await apiClient(base, ADMIN)('GET', '/api/v1/workflows');
        await apiClient(base, GLOBEX_TOKEN)('GET', '/api/v1/workflows/acme/nightly');
      }
    } finally {
      await down.stop();
      await broken.destroy();
    }
    const text = lines.join('');
    expect(text.length).toBeGreaterThan(0);
    // The database away is a 503 with one line (issue 19), not a 500: the failures were logged, pings' included…
    expect(text).toContain('API request refused: database unavailable');
    expect(text).toMatch(/"route":"[^"]*\/:key(\/:signal)?"/); // a ping's failure logs its route pattern, never its key
    for (const secret of [ADMIN, ACME_TOKEN, GLOBEX_TOKEN, ACME_PING, 'xoxb-bad-input-token', SECRET]) expect(text).not.toContain(secret); // …without the secrets
  });
});

describe('HTTP limits', () => {
  it('the server sets its timeouts and header limit explicitly (a slow client is cut off, docs/api.md)', () => {
    expect({
      headersTimeout: app.server.headersTimeout,
      requestTimeout: app.server.requestTimeout,
      keepAliveTimeout: app.server.keepAliveTimeout,
      maxHeaderSize: (app.server as { maxHeaderSize?: number }).maxHeaderSize,
    }).toEqual({ headersTimeout: 30_000, requestTimeout: 120_000, keepAliveTimeout: 5_000, maxHeaderSize: 16 * 1024 });
  });

  it('a Slack request body over 4 MB: 413 with a JSON reason, never Express\'s HTML page', async () => {
    const body = `payload=${'x'.repeat(4 * 1024 * 1024 + 10)}`;
    const res = await toSlack(body, 'application/x-www-form-urlencoded');
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ error: 'body_too_large', message: 'request body is larger than 4194304 bytes' });
  });

  it('a body nothing reads is not drained: a 404, 401, 413 given while it is still coming closes the connection', async () => {
    const { request } = await import('node:http');
    const answer = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request(`${app.url}${path}`, { method: 'POST', headers: { ...headers, 'content-length': String(5 * 1024 * 1024) } }, (res) => {
          res.resume();
          res.on('end', () => (req.destroy(), resolve({ status: res.statusCode!, connection: res.headers.connection })));
        });
        req.on('error', reject);
        req.write(Buffer.alloc(1024, 'x'));
      });
    expect(await answer('/nowhere')).toEqual({ status: 404, connection: 'close' });
    expect(await answer('/api/v1/runs')).toEqual({ status: 401, connection: 'close' });
    expect(await answer('/api/v1/tenants/acme/token', { authorization: `Bearer ${ACME_TOKEN}` })).toMatchObject({ connection: 'close' });
    expect(await answer('/slack/events')).toEqual({ status: 413, connection: 'close' });
    expect(await answer('/api/v1/runs', { authorization: `Bearer ${ACME_TOKEN}` })).toEqual({ status: 413, connection: 'close' });
  });

  it('a slow client holds no transaction: a report\'s body is read before its transaction starts', async () => {
    const arrived = new Promise<import('node:http').IncomingMessage>((resolve) => app.server.once('request', resolve));
    const { request } = await import('node:http');
    const body = JSON.stringify({ tenant: 'acme', workflow: 'nightly', status: 'running', externalId: 'slow-client-1' });
    const req = request(`${app.url}/api/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${ACME_TOKEN}`, 'content-type': 'application/json', 'content-length': String(body.length) } });
    req.on('error', () => {});
    req.write(body.slice(0, 10));
    const incoming = await arrived;
    // Authenticated, and the body parser waiting on the rest of the body.
    await eventually(() => expect(incoming.listenerCount('data')).toBeGreaterThan(0));
    const open = await t.db
      .selectFrom('pg_stat_activity' as never)
      .select(['pid' as never, 'state' as never])
      .where('datname' as never, '=', t.name as never)
      .where('xact_start' as never, 'is not', null as never)
      .where('pid' as never, '!=', (await import('kysely')).sql`pg_backend_pid()` as never)
      .execute();
    expect(open).toEqual([]);
    const answered = new Promise<number>((resolve) => req.on('response', (res) => (res.resume(), resolve(res.statusCode!))));
    req.end(body.slice(10));
    expect(await answered).toBe(201);
  });
});
