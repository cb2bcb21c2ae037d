import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { destinationId, parseWorkflowsFile, WorkflowsFileError } from '../../src/config/workflows-file.js';
import { routeOf, routesFor, shouldRoute } from '../../src/ledger/destinations.js';
import { withDestinationIdKey } from '../../src/ledger/destination-id-key.js';
import { renderMetrics } from '../../src/http/metrics-route.js';
import { ManualClock } from '../../src/clock.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { homeModel } from '../../src/slack/views/queries.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent } from './rig.js';

const ID_KEY = 'destination-id-key-for-tests';
const email = routeOf({ kind: 'email', to: ['ops@acme.example.com'] }, ID_KEY);
const criticalEmail = routeOf({ kind: 'email', to: ['boss@acme.example.com'], minSeverity: 'critical' }, ID_KEY);
const pd = routeOf({ kind: 'pagerduty', routingKey: 'R0UT1NGKEY0123456789ABCDEFGHIJKL' }, ID_KEY);
const onlyOwners = routeOf({ kind: 'webhook', url: 'https://hooks.example.com/x', secret: 'a-long-enough-secret', events: ['owner_changed'] }, ID_KEY);

describe('routing rules', () => {
  it('the tenant and platform channels hear everything, quiet events included, as before destinations existed', () => {
    const routes = routesFor({ channel: 'CACME', destinations: [] }, { PLATFORM_CHANNEL: 'CPLAT' });
    expect(routes.map((r) => r.id)).toEqual(['slack:CACME', 'slack:CPLAT']);
    for (const r of routes) for (const kind of ['opened', 'failure_recorded', 'resolved', 'silenced'] as const) expect(shouldRoute(r, kind, 'warning', false)).toBe(true);
  });

  it('minSeverity: a critical-only destination starts at the escalation; pagerduty defaults to critical', () => {
    expect(shouldRoute(criticalEmail, 'opened', 'warning', false)).toBe(false);
    expect(shouldRoute(criticalEmail, 'owner_changed', 'warning', false)).toBe(false);
    expect(shouldRoute(criticalEmail, 'escalated', 'critical', false)).toBe(true);
    expect(shouldRoute(criticalEmail, 'opened', 'critical', false)).toBe(true);
    expect(pd.minSeverity).toBe('critical');
    expect(shouldRoute(pd, 'opened', 'warning', false)).toBe(false);
    expect(shouldRoute(pd, 'escalated', 'critical', false)).toBe(true);
  });

  it('resolve reaches whoever heard the opening, and nobody who did not', () => {
    expect(shouldRoute(criticalEmail, 'resolved', 'warning', false)).toBe(false);
    expect(shouldRoute(criticalEmail, 'resolved', 'critical', true)).toBe(true);
    expect(shouldRoute(onlyOwners, 'resolved', 'warning', true)).toBe(true);
    expect(shouldRoute(pd, 'resolved', 'critical', false)).toBe(false);
  });

  it('events filter the middle of the thread; quiet events never leave Slack', () => {
    expect(shouldRoute(onlyOwners, 'opened', 'warning', false)).toBe(true);
    expect(shouldRoute(onlyOwners, 'run_requested', 'warning', true)).toBe(false);
    expect(shouldRoute(onlyOwners, 'owner_changed', 'warning', true)).toBe(true);
    expect(shouldRoute(email, 'failure_recorded', 'warning', true)).toBe(false);
    expect(shouldRoute(pd, 'run_finished', 'critical', true)).toBe(false);
  });

  it('destination ids carry no secrets and do not depend on address order or case', () => {
    expect(destinationId({ kind: 'email', to: ['B@x.example.com', 'a@x.example.com'] }, ID_KEY)).toBe('email:a@x.example.com,b@x.example.com');
    expect(pd.id).toMatch(/^pagerduty:[0-9a-f]{12}$/);
    expect(pd.id).not.toContain('R0UT1NG');
  });
});

describe('destination configuration', () => {
  const file = (destinations: unknown[]) => JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', destinations }], workflows: [] }, null, 2);
  const problems = (text: string) => {
    try {
      parseWorkflowsFile(text, 'wf.json');
    } catch (error) {
      if (error instanceof WorkflowsFileError) return error.problems;
      throw error;
    }
    throw new Error('expected rejection');
  };

  it('accepts each kind', () => {
    const parsed = parseWorkflowsFile(
      file([
        { kind: 'slack', channel: 'CEXTRA', minSeverity: 'critical' },
        { kind: 'email', to: ['ops@acme.example.com'], events: ['opened', 'resolved'] },
        { kind: 'webhook', url: 'https://hooks.acme.example.com/s', secret: 'whsec_0123456789abcdef', headers: { 'X-Team': 'data' } },
        { kind: 'pagerduty', routingKey: 'R0UT1NGKEY0123456789ABCDEFGHIJKL' },
      ]),
    );
    expect(parsed.tenants[0]!.destinations!.map((d) => d.kind)).toEqual(['slack', 'email', 'webhook', 'pagerduty']);
  });

  it('names the line, path and value of each problem, hiding secrets', () => {
    const text = file([
      { kind: 'sms', to: '+1555' },
      { kind: 'email', to: ['not-an-address'] },
      { kind: 'webhook', url: 'ftp://x', secret: 'short' },
      { kind: 'pagerduty', routingKey: 'R0UT1NGKEY0123456789ABCDEFGHIJKL', events: ['failure_recorded'], minSeverity: 'fatal' },
    ]);
    const p = problems(text);
    const line = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    expect(p).toContain(`wf.json:${line('"sms"')}: tenants[0].destinations[0].kind: kind must be one of "slack", "email", "webhook", "pagerduty" (got "sms")`);
    expect(p.find((x) => x.includes('destinations[1].to[0]'))).toMatch(/email address.*\(got "not-an-address"\)/);
    expect(p.find((x) => x.includes('destinations[2].url'))).toMatch(/http\(s\) URL \(got "ftp:\/\/x"\)/);
    const secret = p.find((x) => x.includes('destinations[2].secret'))!;
    expect(secret).toContain('at least 16 characters');
    expect(secret).not.toContain('short');
    expect(p.find((x) => x.includes('destinations[3].events[0]'))).toContain('"failure_recorded"');
    expect(p.find((x) => x.includes('destinations[3].minSeverity'))).toContain('"fatal"');
  });

  it('refuses a webhook header the bot sets itself, in any case, naming the header and hiding its value', () => {
    const text = file([
      { kind: 'webhook', url: 'https://hooks.acme.example.com/s', secret: 'whsec_0123456789abcdef', headers: { 'X-Team': 'data', 'idempotency-key': 'k-hunter2', 'x-scheduler-signature': 'v1=hunter2', 'Content-Type': 'text/plain' } },
    ]);
    const p = problems(text);
    expect(p).toEqual([
      expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.headers\.idempotency-key: header "idempotency-key" is set by the bot itself; remove it \(got "\(hidden\)"\)$/),
      expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.headers\.x-scheduler-signature: header "x-scheduler-signature" is set by the bot itself \(every X-Scheduler-\* header is\); remove it \(got "\(hidden\)"\)$/),
      expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.headers\.Content-Type: header "Content-Type" is set by the bot itself; remove it/),
    ]);
    expect(p.join('\n')).not.toContain('hunter2');
    expect(() => loadConfig({ PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'webhook', url: 'https://x.example.com', secret: 'whsec_0123456789abcdef', headers: { 'IDEMPOTENCY-KEY': 'x' } }]) })).toThrow(
      /PLATFORM_DESTINATIONS=\(hidden\): \[0\]\.headers\.IDEMPOTENCY-KEY: header "IDEMPOTENCY-KEY" is set by the bot itself/,
    );
  });

  it('refuses the same destination twice in one list', () => {
    const p = problems(file([{ kind: 'email', to: ['ops@acme.example.com'] }, { kind: 'email', to: ['OPS@acme.example.com'] }]));
    expect(p).toEqual([expect.stringMatching(/tenants\[0\]\.destinations\[1\]: duplicate destination "email:ops@acme.example.com"/)]);
  });

  it('PLATFORM_DESTINATIONS and EVENTS_API_URL are validated with the config, secrets hidden', () => {
    const config = loadConfig({ PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'email', to: ['platform@example.com'] }]), EVENTS_API_URL: 'http://127.0.0.1:9/v2/enqueue' });
    expect(config.PLATFORM_DESTINATIONS).toEqual([{ kind: 'email', to: ['platform@example.com'] }]);
    expect(loadConfig({}).EVENTS_API_URL).toBe('https://events.pagerduty.com/v2/enqueue');
    let error: unknown;
    try {
      loadConfig({ PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'webhook', url: 'https://x.example.com', secret: 'tiny-secret' }]) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['PLATFORM_DESTINATIONS=(hidden): [0].secret: secret must be at least 16 characters']);
    expect(() => loadConfig({ PLATFORM_DESTINATIONS: '[{' })).toThrow(/PLATFORM_DESTINATIONS=\(hidden\): not valid JSON/);
  });
});

describe('platform destinations and dead rows', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.drop());

  it('platform destinations hear every tenant; a dead row of any kind shows on the App Home and in /metrics', async () => {
    await makeTenant(t.db, { id: 'acme', channel: 'CACME' });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly' });
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical' });
    const config = await withDestinationIdKey(
      t.db,
      loadConfig({ PLATFORM_CHANNEL: 'CPLAT', PLATFORM_DESTINATIONS: JSON.stringify([{ kind: 'webhook', url: 'https://hooks.platform.example.com/alerts', secret: 'whsec_0123456789abcdef' }]) }),
    );
    await recordEvent(t.db, config, alert.id, 'opened', { now: T0 });
    const rows = await t.db.selectFrom('notifications').select(['destination']).orderBy('id').execute();
    expect(rows.map((r) => r.destination)).toEqual(['slack:CACME', 'slack:CPLAT', expect.stringMatching(/^webhook:hooks\.platform\.example\.com\/[0-9a-f]{16}$/)]);

    await t.db.updateTable('notifications').set({ status: 'dead', lastError: 'HTTP 410: gone' }).where('destination', 'like', 'webhook:%').execute();
    const home = JSON.stringify(renderHome(await homeModel(t.db, T0, ['acme']), T0));
    // The App Home names the destination's kind, never its URL (the tenant's secret).
    expect(home).toContain('webhook');
    expect(home).not.toContain('hooks.platform.example.com');
    expect(home).toContain('HTTP 410: gone');
    expect(JSON.stringify(renderHome(await homeModel(t.db, T0, ['globex']), T0))).not.toContain('HTTP 410');
    const text = await renderMetrics({ db: t.db, clock: new ManualClock(T0) });
    expect(text).toContain('scheduler_outbox_dead{kind="webhook"} 1');

    // A viewer who is not the platform's (a member of acme's channel only) never sees the platform's own
    // destinations' failures: their errors name its receivers; the platform's viewers see them (above).
    await t.db.updateTable('notifications').set({ status: 'dead', lastError: 'channel_not_found (CPLAT)' }).where('destination', '=', 'slack:CPLAT').execute();
    const tenantHome = await homeModel(t.db, T0, ['acme'], 'U0ACME', { shadow: false, tenantView: config });
    expect(tenantHome.deadCount).toBe(0);
    expect(JSON.stringify(renderHome(tenantHome, T0))).not.toMatch(/HTTP 410|CPLAT|webhook/);
    // A tenant's own destination that died still shows, and one it lists itself is its own, not the platform's.
    await t.db.updateTable('notifications').set({ status: 'dead', lastError: 'not_in_channel' }).where('destination', '=', 'slack:CACME').execute();
    expect((await homeModel(t.db, T0, ['acme'], 'U0ACME', { shadow: false, tenantView: config })).dead.map((d) => d.lastError)).toEqual(['not_in_channel']);
    expect((await homeModel(t.db, T0, ['acme'], 'U0PLAT', { shadow: true })).deadCount).toBe(3);
  });
});
