import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';

const run = promisify(execFile);

let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;

beforeAll(async () => {
  t = await createTestDatabase();
  clock = new ManualClock('2026-03-10T02:00:30Z');
  await makeTenant(t.db);
  app = await startTestApp(t, {}, { clock });
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const observed = () => makeWorkflow(t.db, { cron: '*/5 * * * *', mode: 'observed', nextTickAt: at('2026-03-10T02:05:00Z') });
const runsOf = (workflowId: number) => t.db.selectFrom('runs').selectAll().where('workflowId', '=', workflowId).orderBy('id').execute();
const curl = (...args: string[]) => run('curl', ['-fsS', ...args]);

describe('pings', () => {
  it('curl start, then fail with a body: one failed run whose log excerpt is that body', async () => {
    const wf = await observed();
    await curl('-X', 'POST', `${app.url}/ping/${wf.pingKey}/start`);
    const [started] = await runsOf(wf.id);
    expect(started).toMatchObject({ status: 'running', tick: at('2026-03-10T02:00:00Z'), trigger: 'schedule', leaseOwner: null });
    clock.advance(40_000);
    const log = 'loading orders\nERROR: relation "orders" does not exist\n';
    const { stdout } = await curl('-X', 'POST', '--data-binary', log, `${app.url}/ping/${wf.pingKey}/fail`);
    expect(stdout).toBe('OK\n');
    const rows = await runsOf(wf.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: started!.id,
      status: 'failed',
      logExcerpt: log,
      error: 'reported failed: ERROR: relation "orders" does not exist',
      finishedAt: at('2026-03-10T02:01:10Z'),
      // Evaluated with the ping that ended it (src/engine/evaluate-now.ts).
      processedAt: at('2026-03-10T02:01:10Z'),
    });
  });

  it('ties start and end by rid when runs overlap, and reads an exit code', async () => {
    const wf = await observed();
    const base = `${app.url}/ping/${wf.pingKey}`;
    await curl(`${base}/start?rid=a`);
    await curl(`${base}/start?rid=b`);
    await curl(`${base}/0?rid=b`);
    await curl('--data-binary', 'disk full', `${base}/3?rid=a`);
    const rows = await runsOf(wf.id);
    expect(rows.map((r) => [r.externalId, r.status, r.exitCode, r.error])).toEqual([
      ['ping:a', 'failed', 3, 'exited with code 3: disk full'],
      ['ping:b', 'succeeded', 0, null],
    ]);
    // A retried end (curl --retry) does not make a second run.
    await curl('--data-binary', 'disk full', `${base}/3?rid=a`);
    expect(await runsOf(wf.id)).toHaveLength(2);
  });

  it('records an end without a start as a finished run, and pairs a plain end with the newest plain start', async () => {
    const wf = await observed();
    await curl(`${app.url}/ping/${wf.pingKey}`);
    await curl(`${app.url}/ping/${wf.pingKey}/start`);
    await curl(`${app.url}/ping/${wf.pingKey}`);
    const rows = await runsOf(wf.id);
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(rows[1]!.startedAt!.getTime()).toBeLessThanOrEqual(rows[1]!.finishedAt!.getTime());
  });

  it('keeps the first 100 KB of a bigger body and says it was cut', async () => {
    const wf = await observed();
    const body = 'a'.repeat(150 * 1024);
    const response = await fetch(`${app.url}/ping/${wf.pingKey}/fail`, { method: 'POST', body });
    expect(response.status).toBe(200);
    const [row] = await runsOf(wf.id);
    expect(row!.logExcerpt!.startsWith('a'.repeat(100 * 1024))).toBe(true);
    expect(row!.logExcerpt).toContain(`[… truncated: ${150 * 1024} bytes sent`);
    expect(row!.logExcerpt!.length).toBeLessThan(100 * 1024 + 100);
  });

  it('the crontab line from the workflow view works as pasted: start, then the exit code with the output', async () => {
    const wf = await observed();
    const { workflowView } = await import('../../src/services/workflows-api.js');
    const view = await workflowView(app.deps, wf);
    const line = view.ping.crontab!;
    expect(line.startsWith('*/5 * * * * ')).toBe(true);
    const command = line
      .slice('*/5 * * * * '.length)
      .replaceAll('http://localhost:3000', app.url)
      .replace('/path/to/your-job', `sh -c 'echo "loading"; echo "boom: disk full"; exit 4'`);
    await run('sh', ['-c', command]);
    const rows = await runsOf(wf.id);
    expect(rows).toEqual([expect.objectContaining({ status: 'failed', exitCode: 4, logExcerpt: 'loading\nboom: disk full\n', error: 'exited with code 4: boom: disk full' })]);
  });

  it('answers 404 to an unknown key and 400 to an unknown signal, recording nothing', async () => {
    const wf = await observed();
    expect((await fetch(`${app.url}/ping/not-a-real-key-at-all`)).status).toBe(404);
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/sideways`)).status).toBe(400);
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/256`)).status).toBe(400);
    expect(await runsOf(wf.id)).toEqual([]);
  });

  it('accepts pings for a managed workflow as outside reports, without ending the run the bot launched', async () => {
    const wf = await makeWorkflow(t.db, { cron: '*/5 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
    const launched = await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', startedAt: clock.now(), finishedAt: null, leaseOwner: 'other-replica', leaseExpiresAt: at('2026-03-10T03:00:00Z') });
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/fail`)).status).toBe(200);
    const rows = await runsOf(wf.id);
    expect(rows.find((r) => r.id === launched.id)!.status).toBe('running');
    expect(rows.filter((r) => r.id !== launched.id)).toEqual([expect.objectContaining({ status: 'failed', trigger: 'external', tick: null })]);
  });
});
