import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { destinationId, parseWorkflowsFile, WorkflowsFileError, type DestinationSpec } from '../../src/config/workflows-file.js';
import { verifyLaunchSignature } from '../../src/launch/signature.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTestApp } from '../helpers/app.js';
import { makeTenant, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { insertAlert } from '../helpers/slack-outbox.js';
import { recordEvent, ROUTING_KEY, startDestinationRig, WEBHOOK_SECRET, endDestinationTest, type DestinationRig } from './rig.js';

/** Secrets named by environment variable: checked at start, resolved at sync, delivered with as if inline. */

let t: TestDatabase;
let rig: DestinationRig | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());
afterEach(async () => {
  await endDestinationTest(t.db, rig);
  rig = undefined;
});

const LAUNCHER_SECRET_VALUE = 'launcher-secret-0123456789';

function fileWith(destinations: unknown[], launcher: Record<string, unknown> = { kind: 'http', url: 'https://jobs.example.com/run', secretEnv: 'NIGHTLY_LAUNCH_SECRET' }) {
  return JSON.stringify(
    {
      tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME', destinations }],
      workflows: [{ tenant: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *', launcher }],
    },
    null,
    2,
  );
}

const byEnv: unknown[] = [
  { kind: 'webhook', url: 'https://hooks.acme.example.com/scheduler', secretEnv: 'ACME_WEBHOOK_SECRET' },
  { kind: 'pagerduty', routingKeyEnv: 'ACME_PD_KEY' },
];
const fullEnv = { ACME_WEBHOOK_SECRET: WEBHOOK_SECRET, ACME_PD_KEY: ROUTING_KEY, NIGHTLY_LAUNCH_SECRET: LAUNCHER_SECRET_VALUE };

function problemsOf(text: string, env: Record<string, string>): string[] {
  try {
    parseWorkflowsFile(text, 'wf.json', env);
  } catch (error) {
    if (error instanceof WorkflowsFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

describe('secrets by environment variable in the workflows file', () => {
  it('an unset variable is a problem naming the line, the path and the variable, listed with the file’s other problems in file order', () => {
    const text = fileWith([...byEnv, { kind: 'email', to: ['not-an-address'] }]);
    const problems = problemsOf(text, { ACME_PD_KEY: ROUTING_KEY });
    expect(problems).toEqual([
      expect.stringMatching(/^wf\.json:11: tenants\[0\]\.destinations\[0\]\.secretEnv: names an environment variable that is not set \(got "ACME_WEBHOOK_SECRET"\)$/),
      expect.stringMatching(/^wf\.json:\d+: tenants\[0\]\.destinations\[2\]\.to\[0\]: an email address/),
      expect.stringMatching(/^wf\.json:\d+: workflows\[0\]\.launcher\.secretEnv: names an environment variable that is not set \(got "NIGHTLY_LAUNCH_SECRET"\)$/),
    ]);
  });

  it('a variable holding an unusable value is named, and its value is never repeated', () => {
    const problems = problemsOf(fileWith(byEnv), { ...fullEnv, ACME_WEBHOOK_SECRET: 'short-s3cret', ACME_PD_KEY: 'not a key!! but secret' });
    expect(problems).toEqual([
      expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.secretEnv: the variable's value is not valid: secret must be at least 16 characters \(got "ACME_WEBHOOK_SECRET"\)$/),
      expect.stringMatching(/tenants\[0\]\.destinations\[1\]\.routingKeyEnv: the variable's value is not valid: a PagerDuty Events API v2 integration key/),
    ]);
    expect(problems.join('\n')).not.toMatch(/short-s3cret|not a key/);
  });

  it('exactly one of the inline and the environment form', () => {
    const both = problemsOf(fileWith([{ kind: 'webhook', url: 'https://h.example.com', secret: WEBHOOK_SECRET, secretEnv: 'ACME_WEBHOOK_SECRET' }]), fullEnv);
    expect(both).toEqual([expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.secretEnv: give "secret" or "secretEnv", not both/)]);
    const neither = problemsOf(fileWith([{ kind: 'pagerduty' }]), fullEnv);
    expect(neither).toEqual([expect.stringMatching(/tenants\[0\]\.destinations\[0\]\.routingKey: give "routingKey" or "routingKeyEnv"/)]);
    const launcherBoth = problemsOf(fileWith([], { kind: 'http', url: 'https://jobs.example.com/run', secret: LAUNCHER_SECRET_VALUE, secretEnv: 'NIGHTLY_LAUNCH_SECRET' }), fullEnv);
    expect(launcherBoth).toEqual([expect.stringMatching(/workflows\[0\]\.launcher\.secretEnv: give "secret" or "secretEnv", not both/)]);
    expect(problemsOf(fileWith([{ kind: 'webhook', url: 'https://h.example.com', secretEnv: 'lower-case' }]), fullEnv)).toEqual([
      expect.stringMatching(/destinations\[0\]\.secretEnv: the name of an environment variable/),
    ]);
  });

  it('the sync stores what an inline secret gives, so destination ids do not change when a secret moves to the environment', async () => {
    const file = parseWorkflowsFile(fileWith(byEnv), 'wf.json', fullEnv);
    await syncWorkflowsFile(t.db, file, T0, fullEnv);
    const tenant = await t.db.selectFrom('tenants').select('destinations').where('id', '=', 'acme').executeTakeFirstOrThrow();
    const stored = tenant.destinations as DestinationSpec[];
    expect(stored).toEqual([
      { kind: 'webhook', url: 'https://hooks.acme.example.com/scheduler', secret: WEBHOOK_SECRET },
      { kind: 'pagerduty', routingKey: ROUTING_KEY },
    ]);
    const inline = { kind: 'pagerduty', routingKey: ROUTING_KEY } as const;
    expect(destinationId(stored[1]!, undefined)).toBe(destinationId(inline, undefined));
    expect(destinationId(stored[1]!, undefined)).not.toContain(ROUTING_KEY);
    const wf = await t.db.selectFrom('workflows').select('launcher').executeTakeFirstOrThrow();
    expect(wf.launcher).toEqual({ kind: 'http', url: 'https://jobs.example.com/run', mode: 'sync', secret: LAUNCHER_SECRET_VALUE, operatorSet: true });
  });

  it('a sync in an environment that lacks a variable writes nothing and names the path', async () => {
    const file = parseWorkflowsFile(fileWith(byEnv), 'wf.json', fullEnv);
    const error = await syncWorkflowsFile(t.db, file, T0, { ACME_WEBHOOK_SECRET: WEBHOOK_SECRET }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowsFileError);
    expect((error as WorkflowsFileError).problems).toEqual([
      'workflows file: tenants[0].destinations[1].routingKeyEnv: names an environment variable that is not set (got "ACME_PD_KEY")',
      'workflows file: workflows[0].launcher.secretEnv: names an environment variable that is not set (got "NIGHTLY_LAUNCH_SECRET")',
    ]);
    expect(await t.db.selectFrom('tenants').select('id').execute()).toEqual([]);
  });

  it('PLATFORM_DESTINATIONS resolves the same references at config load; an unset one is a config error without the value', () => {
    const list = JSON.stringify([{ kind: 'webhook', url: 'https://hooks.platform.example.com/a', secretEnv: 'PLATFORM_HOOK_SECRET' }]);
    const config = loadConfig({ PLATFORM_DESTINATIONS: list, PLATFORM_HOOK_SECRET: WEBHOOK_SECRET });
    expect(config.PLATFORM_DESTINATIONS).toEqual([{ kind: 'webhook', url: 'https://hooks.platform.example.com/a', secret: WEBHOOK_SECRET }]);
    const error = (() => {
      try {
        loadConfig({ PLATFORM_DESTINATIONS: list, PLATFORM_HOOK_SECRET: 'tiny-secret-xyz' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'PLATFORM_DESTINATIONS=(hidden): [0].secretEnv: the variable\'s value is not valid: secret must be at least 16 characters (got "PLATFORM_HOOK_SECRET")',
    ]);
  });
});

describe('delivery with secrets from the environment', () => {
  it('the webhook is signed and PagerDuty paged with the variables’ values', async () => {
    rig = await startDestinationRig(t.db);
    const webhookUrl = `${rig.webhook.url}/hooks/scheduler`;
    const env = { ...fullEnv, ACME_WEBHOOK_SECRET: 'whsec_from_the_environment_42' };
    const file = parseWorkflowsFile(fileWith([{ kind: 'webhook', url: webhookUrl, secretEnv: 'ACME_WEBHOOK_SECRET' }, { kind: 'pagerduty', routingKeyEnv: 'ACME_PD_KEY' }]), 'wf.json', env);
    await syncWorkflowsFile(t.db, file, T0, env);
    const wf = await t.db.selectFrom('workflows').select('id').executeTakeFirstOrThrow();
    const alert = await insertAlert(t.db, wf.id, { severity: 'critical', openedAt: T0, escalateAt: null, lastError: 'boom' });

    await recordEvent(t.db, rig.config, alert.id, 'opened', { now: T0, data: { severity: 'critical' } });
    await rig.drain();

    const [hook] = rig.webhook.requests;
    expect(hook).toBeDefined();
    const signed = { body: hook!.body, timestamp: hook!.headers['x-scheduler-timestamp'] as string, signature: hook!.headers['x-scheduler-signature'] as string };
    expect(verifyLaunchSignature('whsec_from_the_environment_42', signed, rig.clock.now())).toEqual({ ok: true });
    expect(verifyLaunchSignature(WEBHOOK_SECRET, signed, rig.clock.now())).toEqual({ ok: false, reason: 'bad_signature' });
    const [page] = rig.pagerduty.requests;
    expect(JSON.parse(page!.body)).toMatchObject({ routing_key: ROUTING_KEY, event_action: 'trigger' });
  });
});

describe('an http launcher over the workflows API', () => {
  it('resolves secretEnv on the way in, and refuses an unset one with 400 naming the path and the variable', async () => {
    process.env.API_LAUNCH_SECRET = LAUNCHER_SECRET_VALUE;
    const admin = 'admin-token-0123456789abcdef';
    const app = await startTestApp(t, { API_TOKEN: admin });
    try {
      await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
      const call = apiClient(app.url, admin);
      const launcher = (secretEnv: string) => ({ cron: '0 2 * * *', launcher: { kind: 'http', url: 'https://jobs.example.com/run', secretEnv } });
      const bad = await call('PUT', '/api/v1/workflows/acme/nightly', launcher('API_LAUNCH_SECRET_UNSET'));
      expect(bad.status).toBe(400);
      expect(bad.body.issues).toEqual(['body: launcher.secretEnv: names an environment variable that is not set (got "API_LAUNCH_SECRET_UNSET")']);
      expect(await t.db.selectFrom('workflows').select('id').execute()).toEqual([]);

      const put = await call('PUT', '/api/v1/workflows/acme/nightly', launcher('API_LAUNCH_SECRET'));
      expect(put.status).toBe(201);
      expect(put.body.launcher).toMatchObject({ kind: 'http', ownSecret: true });
      expect(put.text).not.toContain(LAUNCHER_SECRET_VALUE);
      const row = await t.db.selectFrom('workflows').select('launcher').executeTakeFirstOrThrow();
      expect(row.launcher).toEqual({ kind: 'http', url: 'https://jobs.example.com/run', mode: 'sync', secret: LAUNCHER_SECRET_VALUE, operatorSet: true });
    } finally {
      await app.stop();
      delete process.env.API_LAUNCH_SECRET;
    }
  });
});
