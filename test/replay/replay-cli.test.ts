import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { createPool } from '../../src/db/connect.js';
import { eventually } from '../helpers/eventually.js';
import { storyByChannel, threadsOf } from './transcript-shape.js';

/** `npm run replay` as a real process: what it prints, where, and with which exit code. */
function runReplay(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/replay.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: inject('pgAdminUrl'), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

async function replayDatabases(): Promise<string[]> {
  const admin = createPool(inject('pgAdminUrl'), 1);
  try {
    const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'replay\\_%'`);
    return rows.map((r) => r.datname);
  } finally {
    await admin.end();
  }
}

describe('npm run replay', { timeout: 120_000 }, () => {
  it('--json prints exactly one JSON object on stdout (logs, even at info, go to stderr) and leaves no database behind', async () => {
    const before = await replayDatabases();
    const { code, stdout, stderr } = await runReplay(['examples/scenarios/seed-genuine-defect-night.json', '--json']);
    expect(code, stderr).toBe(0);
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    const out = JSON.parse(stdout) as { calls: Record<string, unknown>[]; summary: Record<string, number> };
    expect(Object.keys(out)).toEqual(['calls', 'summary']);
    expect(Object.keys(out.summary)).toEqual(['alerts', 'roots', 'replies', 'updates', 'failedTicks']);
    expect(out.summary).toMatchObject({ alerts: 2, roots: 4, replies: 18 });
    for (const call of out.calls) {
      expect(Object.keys(call)).toEqual(['at', 'method', 'channel', 'ts', 'thread_ts', 'text', 'blocks', 'metadata']);
      expect(['chat.postMessage', 'chat.update']).toContain(call.method);
      expect(new Date(call.at as string).toISOString()).toBe(call.at);
    }
    const story = storyByChannel(threadsOf(out.calls as never));
    // Nobody takes it: the on-call is paged again in the thread, backing off (30 min, 30 min, 1 h, 2 h), until it recovers.
    expect(story.CACME!['quality-check']).toEqual([['opened', 'escalated', 'reminder', 'reminder', 'reminder', 'reminder', 'resolved']]);
    // Nothing of the CLI's left: a replay database of another file running at the same time (test:slow runs
    // two at once) is there for a while and then dropped; one the CLI left would stay.
    await eventually(async () => expect((await replayDatabases()).filter((name) => !before.includes(name))).toEqual([]), 90_000);
  });

  it('an invalid scenario: exit code 2, every problem on stderr by path and line, nothing on stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'replay-cli-'));
    try {
      const scenario = JSON.parse(await readFile('examples/scenarios/seed-genuine-defect-night.json', 'utf8'));
      scenario.workflows[1].cron = '*/5 * * *';
      scenario.actions[0].channel = 'CNOBODY';
      const file = join(dir, 'broken.json');
      await writeFile(file, JSON.stringify(scenario, null, 2));
      const { code, stdout, stderr } = await runReplay([file, '--json']);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(new RegExp(`${file}:\\d+: workflows\\[1\\]\\.cron: invalid cron`));
      expect(stderr).toMatch(new RegExp(`${file}:\\d+: actions\\[0\\]\\.channel: neither a tenant channel nor the platformChannel \\(got "CNOBODY"\\)`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses unknown options and a missing file with usage', async () => {
    expect((await runReplay(['--yaml'])).code).toBe(2);
    const missing = await runReplay(['no/such/scenario.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no\/such\/scenario\.json: cannot read/);
  });

  it('--from-db: a bad argument is named, before any database is opened', async () => {
    const until = await runReplay(['--from-db', '--tenant', 'acme', '--since', '7d', '--until', 'yesterday']);
    expect(until.code).toBe(2);
    expect(until.stderr).toContain('--until: "yesterday" is not an ISO time');
    const policy = await runReplay(['--from-db', '--tenant', 'acme', '--since', '7d', '--policy', 'no/such/candidate.json']);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(/^--policy no\/such\/candidate\.json is not a valid candidate policy:\n {2}no\/such\/candidate\.json: cannot read/);
    expect(policy.stderr).not.toContain('scenario');
  });
});
