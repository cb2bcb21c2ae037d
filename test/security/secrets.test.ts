import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSecrets, ConfigError, loadConfig } from '../../src/config/env.js';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import type { Workflow } from '../../src/db/schema.js';
import { createRedactor, REDACTED } from '../../src/domain/redact.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { resolveCommandUser } from '../../src/config/command-user.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { forgetAllSecrets, redactSecrets, rememberSecrets } from '../../src/secrets.js';
import { storableOutcome } from '../../src/ledger/runs.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { finishedRun, replicaDeps } from '../runs/support.js';

/** Each secret kind the bot holds, redacted from what it stores; secrets from files; what a command inherits. */

let t: TestDatabase;
let dir: string;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'sb-secrets-'));
  await makeTenant(t.db);
});
afterAll(async () => {
  await t?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('the redactor', () => {
  it('removes every listed value, the longest first, and generated API tokens by their shape', () => {
    const redact = createRedactor(['short', 'secret-value-0123', 'secret-value-0123-longer']);
    expect(redact('a secret-value-0123-longer b secret-value-0123 c short')).toBe(`a ${REDACTED} b ${REDACTED} c short`);
    expect(redact('token sbt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA end')).toBe(`token ${REDACTED} end`);
  });

  it.each([
    ['SLACK_BOT_TOKEN', 'xoxb-kind-bot-token-0123456789'],
    ['SLACK_SIGNING_SECRET', 'kind-signing-secret-0123456789'],
    ['SLACK_APP_TOKEN', 'xapp-kind-app-token-0123456789'],
    ['API_TOKEN', 'kind-admin-token-0123456789'],
    ['LAUNCHER_SECRET', 'kind-launcher-secret-0123456789'],
    ['SMTP_URL', 'smtp://mailer:kind-smtp-password-0123@mail.example.com:587'],
  ])('%s from the configuration is redacted from a run outcome before it is stored', (name, value) => {
    const env: Record<string, string> = { [name]: value };
    // Slack's variables come in pairs (HTTP mode: bot token and signing secret).
    if (name === 'SLACK_SIGNING_SECRET' || name === 'SLACK_APP_TOKEN') env.SLACK_BOT_TOKEN = 'xoxb-kind-companion-0123456789';
    if (name === 'SLACK_BOT_TOKEN') env.SLACK_SIGNING_SECRET = 'kind-companion-signing-0123456789';
    rememberSecrets(configSecrets(loadConfig(env)));
    const secret = name === 'SMTP_URL' ? 'kind-smtp-password-0123' : value;
    const stored = storableOutcome({ status: 'failed', error: `boom ${secret}`, logExcerpt: `x\n${secret}\n`, stage: secret }, 'globex');
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(stored.error).toBe(`boom ${REDACTED}`);
  });

  it('webhook and PagerDuty secrets of PLATFORM_DESTINATIONS are redacted, with the credential headers and URL password of a webhook', () => {
    const webhook = 'platform-webhook-secret-0123456789';
    const routingKey = 'PLATFORMROUTINGKEY0123456789AB';
    const bearer = 'platform-bearer-credential-0123456789';
    const password = 'platform-url-password-0123456789';
    const config = loadConfig({
      PLATFORM_DESTINATIONS: JSON.stringify([
        { kind: 'webhook', url: 'https://h.example.com', secret: webhook },
        { kind: 'pagerduty', routingKey },
        { kind: 'webhook', url: `https://ops:${password}@h2.example.com/hook`, secret: 'platform-second-secret-0123456789', headers: { Authorization: `Bearer ${bearer}`, 'X-Team': 'platform' } },
      ]),
    });
    rememberSecrets(configSecrets(config));
    expect(storableOutcome({ status: 'failed', error: `${webhook} ${routingKey} ${bearer} ${password} platform` }, 'globex').error).toBe(`${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} platform`);
  });

  it("a tenant token, launcher secret and credential header synced from the file are redacted", async () => {
    const env = { ACME_API_TOKEN: 'file-tenant-token-0123456789', NIGHTLY_SECRET: 'file-launcher-secret-0123456789' };
    const file = parseWorkflowsFile(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme', apiTokenEnv: 'ACME_API_TOKEN' }],
        workflows: [{ tenant: 'acme', name: 'n', cron: '0 2 * * *', launcher: { kind: 'http', url: 'https://jobs.example.com', secretEnv: 'NIGHTLY_SECRET', headers: { 'x-api-key': 'file-header-key-0123456789' } } }],
      }),
      'workflows.json',
      env,
    );
    await syncWorkflowsFile(t.db, file, clock.now(), env);
    const out = storableOutcome({ status: 'failed', error: `${env.ACME_API_TOKEN} ${env.NIGHTLY_SECRET} file-header-key-0123456789` }, 'globex').error;
    expect(out).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
  });
});

describe('secrets from files (*_FILE)', () => {
  it('reads each secret variable from the named file, trailing newline dropped', async () => {
    const files: Record<string, string> = {
      SLACK_BOT_TOKEN: 'xoxb-from-file-0123456789',
      SLACK_SIGNING_SECRET: 'signing-from-file-0123456789',
      API_TOKEN: 'admin-from-file-0123456789',
      LAUNCHER_SECRET: 'launcher-from-file-0123456789',
      SMTP_URL: 'smtp://u:p@mail.example.com',
    };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(files)) {
      const path = join(dir, name.toLowerCase());
      await writeFile(path, `${value}\n`, { mode: 0o600 });
      env[`${name}_FILE`] = path;
    }
    const config = loadConfig(env);
    for (const [name, value] of Object.entries(files)) expect(config[name as keyof typeof config]).toBe(value);
  });

  it('both set is an error naming both; an unreadable file names the variable and the path, not a value', async () => {
    const path = join(dir, 'api-token');
    await writeFile(path, 'admin-from-file-0123456789');
    expect(() => loadConfig({ API_TOKEN: 'admin-inline-0123456789', API_TOKEN_FILE: path })).toThrow(ConfigError);
    try {
      loadConfig({ API_TOKEN: 'admin-inline-0123456789', API_TOKEN_FILE: path });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual(['API_TOKEN and API_TOKEN_FILE: both are set; give one or the other']);
    }
    try {
      loadConfig({ SLACK_APP_TOKEN_FILE: join(dir, 'missing') });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([`SLACK_APP_TOKEN_FILE=${JSON.stringify(join(dir, 'missing'))}: cannot read: ENOENT`]);
    }
  });
});

describe('what a command inherits', () => {
  async function launch(command: string, user?: string) {
    const deps = replicaDeps(t.db, clock);
    const launcher = createCommandLauncher(deps, new HeldRuns(), { user });
    const workflow: Workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command, env: { SETTING: 'from-workflow' } }) });
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    const outcome = await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 30 });
    return { outcome, run };
  }

  it("a clean environment: PATH, HOME, LANG, TZ, the workflow's env and the run; nothing else of the bot's", async () => {
    process.env.SB_TEST_BOT_ONLY = 'bot-only-value-0123456789';
    try {
      const { outcome, run } = await launch('env | cut -d= -f1 | sort | tr "\\n" " "');
      expect(outcome).toEqual({ started: true });
      const done = await finishedRun(t.db, run.id);
      const names = done.logExcerpt!.trim().split(' ');
      expect(names, done.logExcerpt!).toContain('SETTING');
      expect(names).toContain('RUN_ID');
      expect(names).not.toContain('SB_TEST_BOT_ONLY');
      const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'SETTING', 'RUN_ID', 'WORKFLOW', 'TENANT', 'TICK', 'ATTEMPT', 'TRIGGER', 'PWD', 'SHLVL', '_']);
      expect(names.filter((n) => !allowed.has(n))).toEqual([]);
    } finally {
      delete process.env.SB_TEST_BOT_ONLY;
    }
  });

  const nobody = resolveCommandUser('nobody');
  const canSwitch = process.getuid?.() === 0 && !('error' in nobody);
  it.skipIf(!canSwitch)('COMMAND_USER runs the command as that user (needs root and a "nobody" user; skipped otherwise)', async () => {
    const { run } = await launch('id -u; id -g; echo "$HOME"', 'nobody');
    const done = await finishedRun(t.db, run.id);
    const user = nobody as Exclude<typeof nobody, { error: string }>;
    expect(done.logExcerpt).toBe(`${user.uid}\n${user.gid}\n${user.home}\n`);
  });

  it('a COMMAND_USER that does not exist is a configuration error naming it', () => {
    expect(() => loadConfig({ COMMAND_USER: 'no-such-user-sb' })).toThrow('COMMAND_USER="no-such-user-sb": no such user in /etc/passwd');
  });

  it('a COMMAND_USER that does not exist starts nothing, rather than running as the bot', async () => {
    const { outcome } = await launch('echo ran', 'no-such-user-sb');
    // Refused before anything starts, and for good: no retry could find the user (docs/launchers.md).
    expect(outcome).toEqual({ started: false, refusal: { kind: 'cannot_start', reason: 'COMMAND_USER="no-such-user-sb": no such user in /etc/passwd' } });
  });
});

describe('forgetting every secret (a test runner hosting one app after another)', () => {
  it('stops redacting what was remembered, the bot’s and each tenant’s, in logs and stored text', () => {
    rememberSecrets(['bot-secret-to-forget-0123']);
    rememberSecrets(['tenant-secret-to-forget-0123'], 'tenant-forget');
    const text = 'bot-secret-to-forget-0123 tenant-secret-to-forget-0123';
    expect(redactSecrets(text)).toBe(`${REDACTED} ${REDACTED}`);
    forgetAllSecrets();
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets(text, 'tenant-forget')).toBe(text);
  });
});
