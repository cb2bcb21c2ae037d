import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, slackMode } from '../src/config/env.js';

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

  it('parses ADMIN_USERS into a list', () => {
    expect(loadConfig({ ADMIN_USERS: 'U01, W02 ,' }).ADMIN_USERS).toEqual(['U01', 'W02']);
  });
});
