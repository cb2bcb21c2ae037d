import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateSync, gzipSync } from 'node:zlib';
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

  it('a ping to a paused workflow is recorded and does not resume it (a pause is lifted by a person, the file or the API)', async () => {
    const wf = await observed();
    await t.db.updateTable('workflows').set({ paused: true, pausedAt: clock.now(), pausedBy: 'U0OPS', pauseReason: 'vendor outage' }).where('id', '=', wf.id).execute();
    const { stdout } = await curl('-X', 'POST', `${app.url}/ping/${wf.pingKey}/fail`);
    expect(stdout).toBe('OK\n');
    expect(await runsOf(wf.id)).toHaveLength(1);
    await curl('-X', 'POST', `${app.url}/ping/${wf.pingKey}`);
    expect(await t.db.selectFrom('workflows').select(['paused', 'pausedBy']).where('id', '=', wf.id).executeTakeFirstOrThrow()).toEqual({ paused: true, pausedBy: 'U0OPS' });
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
    // A crontab line pings `$?`: a job the OOM killer ended comes as the shell's 128 + 9.
    await curl(`${base}/137?rid=c`);
    expect((await runsOf(wf.id)).find((r) => r.externalId === 'ping:c')).toMatchObject({ status: 'failed', exitCode: 137, error: 'killed by SIGKILL (exit code 137)' });
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

  it('an end that forgot its rid ends the start that had one (as Healthchecks does), preferring a start without one', async () => {
    const wf = await observed();
    const base = `${app.url}/ping/${wf.pingKey}`;
    await curl(`${base}/start?rid=a`);
    clock.advance(20_000);
    await curl(`${base}/0`);
    let rows = await runsOf(wf.id);
    // One run, ended: left running, it would have timed out later as a failure of a job that succeeded.
    expect(rows.map((r) => [r.externalId, r.status, r.exitCode])).toEqual([['ping:a', 'succeeded', 0]]);

    await curl(`${base}/start?rid=b`);
    await curl(`${base}/start`);
    await curl(`${base}/fail`);
    rows = await runsOf(wf.id);
    expect(rows.slice(1).map((r) => [r.externalId, r.status])).toEqual([
      ['ping:b', 'running'],
      [null, 'failed'],
    ]);
  });

  it('keeps the first 96 KB and the last 4 KB of a bigger body and says it was cut', async () => {
    const wf = await observed();
    const body = 'a'.repeat(150 * 1024);
    const response = await fetch(`${app.url}/ping/${wf.pingKey}/fail`, { method: 'POST', body });
    expect(response.status).toBe(200);
    const [row] = await runsOf(wf.id);
    expect(row!.logExcerpt!.startsWith('a'.repeat(96 * 1024))).toBe(true);
    expect(row!.logExcerpt!.endsWith(`kept]\n${'a'.repeat(4 * 1024)}`)).toBe(true);
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

  it('a log too big to keep whole still ends in its own last line: that is the error, never the cut marker', async () => {
    const wf = await observed();
    const body = `${'copying row\n'.repeat(15_000)}ERROR: disk full on /var/lib/pg\n`;
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/1`, { method: 'POST', body })).status).toBe(200);
    const [row] = await runsOf(wf.id);
    expect(row!.error).toBe('exited with code 1: ERROR: disk full on /var/lib/pg');
    expect(row!.logExcerpt!.startsWith('copying row\n')).toBe(true);
    expect(row!.logExcerpt).toContain(`[… truncated: ${Buffer.byteLength(body)} bytes sent`);
    expect(row!.logExcerpt!.endsWith('ERROR: disk full on /var/lib/pg\n')).toBe(true);
    expect(Buffer.byteLength(row!.logExcerpt!)).toBeLessThan(100 * 1024 + 200);
  });

  it("a body written for a terminal (colours, a redrawn progress line, a bell) gives an error line as the terminal showed it", async () => {
    const wf = await observed();
    const body = 'sync 10%\rsync 80%\r\x1b[31mERROR\x1b[0m: quota exceeded\x07\r\n';
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/1`, { method: 'POST', body })).status).toBe(200);
    const [row] = await runsOf(wf.id);
    expect(row!.error).toBe('exited with code 1: ERROR: quota exceeded');
    expect(row!.logExcerpt).toBe(body);
  });

  /** The crontab line of a workflow, with the bot at `base` and `job` as the command, as cron's /bin/sh would run it. */
  const crontabCommand = async (wf: { id: number; pingKey: string }, job: string, base = app.url) => {
    const { workflowView } = await import('../../src/services/workflows-api.js');
    const workflow = await t.db.selectFrom('workflows').selectAll().where('id', '=', wf.id).executeTakeFirstOrThrow();
    const line = (await workflowView(app.deps, workflow)).ping.crontab!;
    // Cron turns an unescaped % into a newline: a line that works in a crontab has none.
    expect(line).not.toContain('%');
    return line.slice('*/5 * * * * '.length).replaceAll('http://localhost:3000', base).replace('/path/to/your-job', job);
  };

  it('the crontab line keeps the job\'s output as printed, backslashes included (cron runs it with /bin/sh, often dash)', async () => {
    const wf = await observed();
    const dir = await mkdtemp(join(tmpdir(), 'ping-job-'));
    const output = 'copying C:\\cache\\new\\x.csv\nERROR: bad field \\t in C:\\data\n';
    await writeFile(join(dir, 'out.txt'), output);
    await run('/bin/sh', ['-c', await crontabCommand(wf, `cat ${dir}/out.txt; exit 2`)]);
    const rows = await runsOf(wf.id);
    expect(rows).toEqual([expect.objectContaining({ status: 'failed', exitCode: 2, logExcerpt: output, error: 'exited with code 2: ERROR: bad field \\t in C:\\data' })]);
  });

  it('the crontab line survives a start that curl --retry sends twice: one run, ended by the job\'s end', async () => {
    const wf = await observed();
    // A proxy in front of the bot whose first /start answer is lost after the bot recorded it (a gateway timeout): curl retries it.
    let lost = false;
    const proxy: Server = createServer((req, res) => {
      const upstream = request(`${app.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          if (!lost && req.url!.split('?')[0]!.endsWith('/start')) {
            lost = true;
            res.writeHead(504).end('gateway timeout\n');
            return;
          }
          res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(chunks));
        });
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      await run('/bin/sh', ['-c', await crontabCommand(wf, 'echo done', base)]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
    expect(lost).toBe(true);
    // Without a run id the retried start is a second running row; the end closes that one and the tick's own row
    // stays running until its timeout fails it ("timed out"): a false failure for a job that worked.
    expect((await runsOf(wf.id)).map((r) => r.status)).toEqual(['succeeded']);
  });

  it('offers no crontab line for a schedule a crontab cannot hold (L, #, ?, H are extensions cron refuses), and says why', async () => {
    const { workflowView } = await import('../../src/services/workflows-api.js');
    for (const cron of ['0 2 L * *', '0 2 * * 5#3', '0 2 ? * *', 'H 2 * * *', '0 2 * * 5L']) {
      const wf = await makeWorkflow(t.db, { cron, mode: 'observed' });
      const view = await workflowView(app.deps, wf);
      expect(view.ping.crontab, cron).toBeUndefined();
      expect(view.ping.crontabUnavailable, cron).toMatch(/^cron cannot read /);
    }
    // Names, steps, ranges, lists and macros are every crontab's own.
    for (const cron of ['*/15 9-17 * JAN-JUN mon-fri', '0 2 1,15 * 7', '@daily']) {
      const view = await workflowView(app.deps, await makeWorkflow(t.db, { cron, mode: 'observed' }));
      expect(view.ping.crontab!.startsWith(`${cron} rid=`), cron).toBe(true);
    }
  });

  it('a compressed body (Content-Encoding gzip or deflate) is kept as the text it holds, as the API reads one: the error is its last line', async () => {
    for (const [encoding, compress] of [['gzip', gzipSync], ['deflate', deflateSync]] as const) {
      const wf = await observed();
      const log = `loading orders\nERROR: ${encoding} disk full\n`;
      const answer = await fetch(`${app.url}/ping/${wf.pingKey}/1`, { method: 'POST', body: compress(log), headers: { 'content-encoding': encoding } });
      expect([answer.status, await answer.text()], encoding).toEqual([200, 'OK\n']);
      // Before, the compressed bytes themselves were the log and the "error": mojibake, and a new error group each time.
      expect(await runsOf(wf.id), encoding).toEqual([expect.objectContaining({ status: 'failed', logExcerpt: log, error: `exited with code 1: ERROR: ${encoding} disk full` })]);
    }
  });

  it('a compressed body that does not inflate is a 400, an encoding it cannot read a 415, one inflating past 10 MB a 413; each names it and records nothing', async () => {
    const wf = await observed();
    const send = async (body: BodyInit, encoding: string) => {
      const answer = await fetch(`${app.url}/ping/${wf.pingKey}/fail`, { method: 'POST', body, headers: { 'content-encoding': encoding } });
      return [answer.status, await answer.text()];
    };
    expect(await send('plain text, not gzip', 'gzip')).toEqual([400, expect.stringMatching(/^body: not valid gzip data/)]);
    expect(await send('x', 'zstd')).toEqual([415, 'content-encoding: "zstd" is not supported (use gzip, deflate, or none)\n']);
    expect(await send(gzipSync(Buffer.alloc(11 * 1024 * 1024, 'a')), 'gzip')).toEqual([413, 'body larger than 10485760 bytes\n']);
    expect(await runsOf(wf.id)).toEqual([]);
  });

  it('answers each form docs/api.md lists: HEAD like GET, a trailing slash the same URL, keys and suffixes case-sensitive, an exit code out of 0-255 or /log a 400 saying why, other suffixes a 400 naming the forms', async () => {
    const wf = await observed();
    const base = `${app.url}/ping/${wf.pingKey}`;
    const ask = async (method: string, url: string) => {
      const answer = await fetch(url, { method });
      return [answer.status, await answer.text()];
    };
    expect(await ask('HEAD', `${base}/start`)).toEqual([200, '']);
    expect(await ask('GET', `${base}/0/`)).toEqual([200, 'OK\n']);
    expect(await ask('POST', `${base}/`)).toEqual([200, 'OK\n']);
    for (const suffix of ['START', '1.0']) {
      expect(await ask('GET', `${base}/${suffix}`), suffix).toEqual([400, 'unknown ping: use /start, /fail, or an exit code 0-255\n']);
    }
    for (const code of ['256', '-1', '1000']) {
      expect(await ask('POST', `${base}/${code}`), code).toEqual([400, `exit code ${code} is out of range: use 0-255, as a shell's $? is; nothing was recorded\n`]);
    }
    expect(await ask('POST', `${base}/log`)).toEqual([400, expect.stringMatching(/^\/log is not supported: .*\n$/)]);
    expect(await ask('GET', `${app.url}/ping/${wf.pingKey.toUpperCase()}`)).toEqual([404, 'not found\n']);
    expect((await runsOf(wf.id)).map((r) => [r.status, r.exitCode])).toEqual([
      ['succeeded', 0],
      ['succeeded', null],
    ]);
  });

  it('answers 404 to an unknown key and 400 to an unknown signal, recording nothing', async () => {
    const wf = await observed();
    expect((await fetch(`${app.url}/ping/not-a-real-key-at-all`)).status).toBe(404);
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/sideways`)).status).toBe(400);
    expect((await fetch(`${app.url}/ping/${wf.pingKey}/256`)).status).toBe(400);
    expect(await runsOf(wf.id)).toEqual([]);
  });

  it('answers an unknown key without reading its body: the 404 comes while the client is still sending', async () => {
    // Headers announcing 5 MB, and only the first kilobyte sent: a server that read the body first would wait for the rest.
    const response = await new Promise<{ status: number; text: string; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${app.url}/ping/not-a-real-key-at-all-xx/fail`, { method: 'POST', headers: { 'content-length': String(5 * 1024 * 1024) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, text, connection: res.headers.connection });
        });
      });
      req.on('error', reject);
      req.write(Buffer.alloc(1024, 'x'));
    });
    expect(response).toEqual({ status: 404, text: 'not found\n', connection: 'close' });
  });

  it('a repeated rid is a 400 naming rid (never quietly no rid), recording nothing', async () => {
    const wf = await observed();
    for (const query of ['rid=a&rid=b', 'rid=a&rid=a']) {
      const answer = await fetch(`${app.url}/ping/${wf.pingKey}/start?${query}`, { method: 'POST' });
      expect(answer.status, query).toBe(400);
      expect(await answer.text(), query).toMatch(/^rid: /);
    }
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
