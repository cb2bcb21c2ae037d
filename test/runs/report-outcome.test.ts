import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { reportOutcome } from '../../src/launch/report-outcome.js';
import { RUN_LEASE_MS } from '../../src/ledger/runs.js';
import { silentLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A launcher's report of a run's end while the database is away: it is
 * retried for the run's lease period (on the injected clock), not dropped
 * after a few seconds, so a success is not turned into "worker lost" and a
 * second run. The database is reached through a TCP forwarder that refuses
 * connections until it is started.
 */

let t: TestDatabase;
let port: number;
let away: Db;
let forwarder: Server | undefined;
const sockets = new Set<Socket>();

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  const probe = createServer();
  port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
  await new Promise((resolve) => probe.close(resolve));
  const url = new URL(t.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  away = createDb(createPool(url.toString(), 2));
});
afterAll(async () => {
  await away.destroy();
  for (const s of sockets) s.destroy();
  if (forwarder) await new Promise((resolve) => forwarder!.close(resolve));
  await t.drop();
});

function startForwarder(): Promise<void> {
  const real = new URL(t.url);
  forwarder = createServer((client) => {
    const server = connect(Number(real.port || 5432), real.hostname);
    sockets.add(client).add(server);
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  return new Promise((resolve) => forwarder!.listen(port, '127.0.0.1', () => resolve()));
}

describe('reportOutcome during a database outage', () => {
  it('keeps retrying with back-off past the old few seconds, and records the success once the database answers', async () => {
    const clock = new ManualClock('2026-03-10T02:00:30Z');
    const wf = await makeWorkflow(t.db, { cron: '*/5 * * * *' });
    const run = await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', startedAt: at('2026-03-10T02:00:00Z'), finishedAt: null, leaseOwner: 'r1', leaseExpiresAt: at('2026-03-10T02:01:30Z') });
    const reported = reportOutcome({ db: away, clock, logger: silentLogger }, run.id, { status: 'succeeded', exitCode: 0 });
    // Half the lease period of refusals (the old code gave up after four tries, about 4 s).
    const startedAt = clock.now().getTime();
    const delays: number[] = [];
    while (clock.now().getTime() - startedAt < RUN_LEASE_MS / 2) {
      const wake = await eventually(() => clock.nextWake() ?? Promise.reject(new Error('not sleeping yet')));
      delays.push(wake.getTime() - clock.now().getTime());
      clock.set(wake);
    }
    expect(delays.slice(0, 4)).toEqual([250, 500, 1000, 2000]);
    expect(Math.max(...delays)).toBe(5000);
    // Still waiting to try again (not given up), when the database comes back.
    const wake = await eventually(() => clock.nextWake() ?? Promise.reject(new Error('not sleeping yet')));
    await startForwarder();
    clock.set(wake);
    expect(await reported).toMatchObject({ kind: 'finished' });
    expect(await t.db.selectFrom('runs').select(['status', 'leaseOwner']).where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'succeeded', leaseOwner: null });
  });

  it('gives up once the lease period has passed, and at once (after one last try) when the replica stops', async () => {
    const clock = new ManualClock('2026-03-10T02:00:30Z');
    const probe = createServer();
    const nowhere = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
    await new Promise((resolve) => probe.close(resolve));
    const url = new URL(t.url);
    url.hostname = '127.0.0.1';
    url.port = String(nowhere);
    const down = createDb(createPool(url.toString(), 1));
    try {
      const wf = await makeWorkflow(t.db, { cron: '*/5 * * * *' });
      const run = await makeRun(t.db, { workflowId: wf.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', startedAt: at('2026-03-10T02:00:00Z'), finishedAt: null, leaseOwner: 'r1', leaseExpiresAt: at('2026-03-10T02:01:30Z') });
      let done = false;
      const reported = reportOutcome({ db: down, clock, logger: silentLogger }, run.id, { status: 'succeeded' }).finally(() => (done = true));
      const startedAt = clock.now().getTime();
      while (!done) {
        const wake = await eventually(() => (done ? clock.now() : (clock.nextWake() ?? Promise.reject(new Error('not sleeping yet')))));
        clock.set(wake);
      }
      expect(await reported).toBeUndefined();
      expect(clock.now().getTime() - startedAt).toBe(RUN_LEASE_MS);

      const stop = new AbortController();
      const stopped = reportOutcome({ db: down, clock, logger: silentLogger }, run.id, { status: 'succeeded' }, stop.signal);
      await eventually(() => clock.nextWake() ?? Promise.reject(new Error('not sleeping yet')));
      stop.abort();
      expect(await stopped).toBeUndefined();
      expect(await t.db.selectFrom('runs').select('status').where('id', '=', run.id).executeTakeFirstOrThrow()).toEqual({ status: 'running' });
    } finally {
      await down.destroy();
    }
  });
});
