import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, misspelledVariables, slackMode } from '../src/config/env.js';
import { emailWithoutSmtp, missingCommandPaths, variablesNamedIn } from '../src/config/start-warnings.js';
import { parseWorkflowsFile } from '../src/config/workflows-file.js';

describe('loadConfig', () => {
  it('gives working defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.DATA_DIR).toBe('./.data');
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.POLL_INTERVAL_SECONDS).toBe(30);
    expect(slackMode(config)).toBe('console');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes a numeric variable set to nothing (PORT= in an env file) as unset: its default, never 0', () => {
    // z.coerce.number('') is 0: PORT= listened on a random port, STORM_MIN_ALERTS= turned storms off, SHUTDOWN_GRACE_SECONDS= killed commands at once.
    const blank = loadConfig({ PORT: '', STORM_MIN_ALERTS: ' ', SHARED_CAUSE_MIN_WORKFLOWS: '', SHUTDOWN_GRACE_SECONDS: '', POLL_INTERVAL_SECONDS: '', RETENTION_BATCH: '' });
    expect(blank).toMatchObject({ PORT: 3000, STORM_MIN_ALERTS: 5, SHARED_CAUSE_MIN_WORKFLOWS: 3, SHUTDOWN_GRACE_SECONDS: 10, POLL_INTERVAL_SECONDS: 30, RETENTION_BATCH: 5000 });
    // An explicit 0 still means 0 where it is allowed.
    expect(loadConfig({ PORT: '0', STORM_MIN_ALERTS: '0' })).toMatchObject({ PORT: 0, STORM_MIN_ALERTS: 0 });
  });

  it('takes any variable set to nothing as unset, text and URLs and crons too', () => {
    // LOG_LEVEL= or HOST= in an env file stopped the start ("Invalid option"), though the docs promise the default.
    const blank = loadConfig({ LOG_LEVEL: '', DATA_DIR: '', HOST: ' ', SMTP_FROM: '', EVENTS_API_URL: '', REPLICA_ID: '', RETENTION_CRON: '' });
    expect(blank).toMatchObject({
      LOG_LEVEL: 'info',
      DATA_DIR: './.data',
      HOST: '0.0.0.0',
      SMTP_FROM: 'scheduler-bot <scheduler-bot@localhost>',
      EVENTS_API_URL: 'https://events.pagerduty.com/v2/enqueue',
      RETENTION_CRON: '17 * * * *',
    });
    expect(blank.REPLICA_ID).toMatch(/:\d+$/);
  });

  it('refuses intervals and waits past what a timer can hold, and a retention with no cut-off date', () => {
    // 3e6 s is past 2^31 ms: Node's setTimeout fired at once, so every loop spun against the database.
    const problems = (() => {
      try {
        loadConfig({ POLL_INTERVAL_SECONDS: '3e6', TICK_INTERVAL_SECONDS: '0.0001', SHUTDOWN_GRACE_SECONDS: '1e7', STARTUP_DATABASE_WAIT_SECONDS: '1e9', RUN_RETENTION_DAYS: '1e9' });
      } catch (error) {
        return (error as ConfigError).problems;
      }
      return [];
    })();
    expect(problems.map((p) => p.split('=')[0]).sort()).toEqual(['POLL_INTERVAL_SECONDS', 'RUN_RETENTION_DAYS', 'SHUTDOWN_GRACE_SECONDS', 'STARTUP_DATABASE_WAIT_SECONDS', 'TICK_INTERVAL_SECONDS']);
    expect(problems.find((p) => p.startsWith('POLL_INTERVAL_SECONDS='))).toContain('"3e6"');
    expect(loadConfig({ POLL_INTERVAL_SECONDS: '86400', SHUTDOWN_GRACE_SECONDS: '3600', RUN_RETENTION_DAYS: '3650' })).toMatchObject({ POLL_INTERVAL_SECONDS: 86_400, SHUTDOWN_GRACE_SECONDS: 3600, RUN_RETENTION_DAYS: 3650 });
  });

  it('takes only http(s) URLs for PUBLIC_URL and SLACK_API_URL', () => {
    // PUBLIC_URL is put into ping URLs, callback URLs and links: javascript: or ftp: was taken as it came.
    expect(() => loadConfig({ PUBLIC_URL: 'javascript:alert(1)' })).toThrow('PUBLIC_URL="javascript:alert(1)": must be an http:// or https:// URL');
    expect(() => loadConfig({ SLACK_API_URL: 'file:///etc/passwd' })).toThrow('SLACK_API_URL="file:///etc/passwd": must be an http:// or https:// URL');
    expect(loadConfig({ PUBLIC_URL: 'https://scheduler.example.com', SLACK_API_URL: 'http://127.0.0.1:9000/api/' })).toMatchObject({ PUBLIC_URL: 'https://scheduler.example.com' });
  });

  it('warns at start of email destinations that cannot be delivered without SMTP_URL', () => {
    const file = parseWorkflowsFile(
      JSON.stringify({
        tenants: [
          { id: 'acme', name: 'Acme', destinations: [{ kind: 'slack', channel: 'C0MGMT' }, { kind: 'email', to: ['oncall@acme.example.com'] }] },
          { id: 'globex', name: 'Globex' },
        ],
        workflows: [],
      }),
    );
    const platform = loadConfig({ PLATFORM_DESTINATIONS: '[{"kind":"email","to":["ops@example.com"]}]' });
    expect(emailWithoutSmtp(file, platform)).toEqual([
      'SMTP_URL is not set, so these email destinations cannot be delivered (their notifications go dead): tenants[0].destinations[1] (tenant acme), PLATFORM_DESTINATIONS[0]',
    ]);
    expect(emailWithoutSmtp(file, loadConfig({ SMTP_URL: 'smtp://mail.example.com:587' }))).toEqual([]);
    expect(emailWithoutSmtp({ tenants: [{ id: 'x', name: 'X' }] as never }, loadConfig({}))).toEqual([]);
  });

  it('warns at start of a command launcher whose program path does not exist, naming the field, the value and where it was looked for', () => {
    // A typo in the path was learned at the first tick (02:00, exit 127), not at start.
    const file = parseWorkflowsFile(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme' }],
        workflows: [
          { tenant: 'acme', name: 'a', cron: '0 2 * * *', launcher: { kind: 'command', command: './bin/refresh-warehuose --full' } },
          { tenant: 'acme', name: 'b', cron: '0 2 * * *', launcher: { kind: 'command', command: 'LANG=C /usr/bin/env true' } },
          { tenant: 'acme', name: 'c', cron: '0 2 * * *', launcher: { kind: 'command', command: 'echo hello; exit 2' } },
          { tenant: 'acme', name: 'd', cron: '0 2 * * *', launcher: { kind: 'command', command: '"scripts/no such.sh"', cwd: '/tmp' } },
          { tenant: 'acme', name: 'e', cron: '0 2 * * *', launcher: { kind: 'command', command: 'scripts/check-imports.ts' } },
          { tenant: 'acme', name: 'f', cron: '0 2 * * *' },
        ],
      }),
    );
    expect(missingCommandPaths(file, process.cwd())).toEqual([
      `workflows[0].launcher.command: "./bin/refresh-warehuose" does not exist (looked for in ${process.cwd()}); its runs will fail with exit code 127 until it does (got "./bin/refresh-warehuose --full")`,
      `workflows[3].launcher.command: "scripts/no such.sh" does not exist (looked for in /tmp); its runs will fail with exit code 127 until it does (got "\\"scripts/no such.sh\\"")`,
    ]);
  });

  it('takes a LAUNCHER_SECRET only as long as a launcher\'s own secret must be, never echoing it', () => {
    // 'x' was taken, though every launcher's and webhook's own secret needs 16 characters.
    expect(() => loadConfig({ LAUNCHER_SECRET: 'x' })).toThrow('LAUNCHER_SECRET=(hidden): must be at least 16 characters');
    expect(loadConfig({ LAUNCHER_SECRET: 'launcher-secret-0123456789' }).LAUNCHER_SECRET).toBe('launcher-secret-0123456789');
  });

  it('names a variable a typo away from one it reads, and nothing else of the environment', () => {
    expect(misspelledVariables({ SLACK_BOT_TOKN: 'xoxb-1', Port: '8080', SLACK_SIGNING_SECRT: 's', DATABASE_URI: 'postgres://x' })).toEqual([
      'SLACK_BOT_TOKN is set but not read; did you mean SLACK_BOT_TOKEN?',
      'Port is set but not read; did you mean PORT?',
      'SLACK_SIGNING_SECRT is set but not read; did you mean SLACK_SIGNING_SECRET?',
      'DATABASE_URI is set but not read; did you mean DATABASE_URL?',
    ]);
    // Other programs' variables, the bot's own, *_FILE twins and tenants' token variables pass.
    // A variable the workflows file names is read, however close to one of ours its name is.
    const file = { tenants: [{ id: 'acme', destinations: [{ kind: 'pagerduty', routingKeyEnv: 'API_TOKEN2' }] }], workflows: [{ launcher: { kind: 'http', secretEnv: 'PORT1' } }] };
    expect(variablesNamedIn(file)).toEqual(['API_TOKEN2', 'PORT1']);
    expect(misspelledVariables({ API_TOKEN2: 'x', PORT1: 'y', PROT: '1' }, variablesNamedIn(file))).toEqual(['PROT is set but not read; did you mean PORT?']);
    expect(misspelledVariables({ HOME: '/root', PATH: '/bin', PWD: '/', LANG: 'C', HOSTNAME: 'x', SHELL: 'sh', TERM: 'xterm', PORT: '1', API_TOKEN_FILE: '/x', ACME_API_TOKEN: 't', TEST_DATABASE_URL: 'x', NODE_ENV: 'production', USER: 'bot' })).toEqual([]);
  });

  it('reports every bad variable at once, by name and value', () => {
    let caught: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', ADMIN_USERS: 'U123,bob', POLL_INTERVAL_SECONDS: '-1' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems).toHaveLength(5);
    expect(problems.find((p) => p.startsWith('PORT='))).toContain('"eighty"');
    expect(problems.find((p) => p.startsWith('LOG_LEVEL='))).toContain('"loud"');
    expect(problems.find((p) => p.startsWith('ADMIN_USERS='))).toContain('"U123,bob"');
    expect(problems.find((p) => p.startsWith('POLL_INTERVAL_SECONDS='))).toContain('"-1"');
    // URLs may carry passwords: named, never echoed.
    expect(problems.find((p) => p.startsWith('DATABASE_URL='))).toContain('(hidden)');
  });

  it('validates retention and outage settings by name and value', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ RUN_RETENTION_DAYS: 30, ALERT_RETENTION_DAYS: 180, NOTIFICATION_RETENTION_DAYS: 30, RETENTION_BATCH: 5000, RETENTION_CRON: '17 * * * *', DESTINATION_OUTAGE_NOTICE_MINUTES: 15 });
    let caught: unknown;
    try {
      loadConfig({ RUN_RETENTION_DAYS: '0', RETENTION_CRON: 'every night', RETENTION_BATCH: '5', DESTINATION_OUTAGE_NOTICE_MINUTES: 'soon' });
    } catch (error) {
      caught = error;
    }
    const problems = (caught as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.find((p) => p.startsWith('RUN_RETENTION_DAYS='))).toContain('"0"');
    expect(problems.find((p) => p.startsWith('RETENTION_CRON='))).toContain('"every night"');
    expect(problems.find((p) => p.startsWith('RETENTION_BATCH='))).toContain('"5"');
    expect(problems.find((p) => p.startsWith('DESTINATION_OUTAGE_NOTICE_MINUTES='))).toContain('"soon"');
  });

  it('needs a signing secret or an app token with a bot token', () => {
    expect(() => loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/SLACK_SIGNING_SECRET/);
    expect(slackMode(loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' }))).toBe('http');
    expect(slackMode(loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }))).toBe('socket');
    expect(() => loadConfig({ SLACK_APP_TOKEN: 'xapp-1' })).toThrow(/SLACK_BOT_TOKEN/);
  });

  it('refuses a PLATFORM_CHANNEL that is a channel name, not an id, saying where the id is', () => {
    // Taken as given, every alert's platform thread failed later with channel_not_found.
    expect(() => loadConfig({ PLATFORM_CHANNEL: '#platform' })).toThrow(
      'PLATFORM_CHANNEL="#platform": a Slack channel id such as C0123ABCD; a channel name is not one (in Slack, the channel\'s details show its id at the bottom)',
    );
    expect(loadConfig({ PLATFORM_CHANNEL: 'C0PLATFORM' }).PLATFORM_CHANNEL).toBe('C0PLATFORM');
  });

  it('reads PLATFORM_ONCALL as one group and users, refusing anything else by name and value, and only with a platform channel', () => {
    expect(loadConfig({ PLATFORM_CHANNEL: 'C0PLATFORM', PLATFORM_ONCALL: 'S0OPS, U0BOB,W0EVE' }).PLATFORM_ONCALL).toEqual({ group: 'S0OPS', users: ['U0BOB', 'W0EVE'] });
    expect(loadConfig({ PLATFORM_CHANNEL: 'C0PLATFORM' }).PLATFORM_ONCALL).toBeUndefined();
    expect(() => loadConfig({ PLATFORM_CHANNEL: 'C0PLATFORM', PLATFORM_ONCALL: 'S0OPS,@bob' })).toThrow(
      'PLATFORM_ONCALL="S0OPS,@bob": "@bob" is neither a user group id (S0123ABCD) nor a user id (U0123ABCD or W0123ABCD)',
    );
    expect(() => loadConfig({ PLATFORM_CHANNEL: 'C0PLATFORM', PLATFORM_ONCALL: 'S0OPS,S0SRE' })).toThrow('PLATFORM_ONCALL="S0OPS,S0SRE": names 2 user groups (S0OPS, S0SRE); name one group and any users');
    expect(() => loadConfig({ PLATFORM_ONCALL: 'S0OPS' })).toThrow('PLATFORM_ONCALL="S0OPS": needs PLATFORM_CHANNEL, the channel the platform\'s on-call is paged in');
  });

  it('parses ADMIN_USERS into a list', () => {
    expect(loadConfig({ ADMIN_USERS: 'U01, W02 ,' }).ADMIN_USERS).toEqual(['U01', 'W02']);
  });
});
