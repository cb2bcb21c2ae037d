import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { ConfigError } from '../src/config/env.js';
import { runReplica } from '../src/lifecycle.js';
import { createLogger } from '../src/log.js';

/** A replica's lifecycle with its process edges played by the test: the signal it is sent, the exit code it chooses, its log lines. */
function harness() {
  const lines: { level: number; msg: string; err?: { message: string }; [field: string]: unknown }[] = [];
  const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  let signal: (name: string) => void = () => {};
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  const exits: number[] = [];
  return {
    lines,
    exited,
    exits,
    send: (name: string) => signal(name),
    edges: {
      logger,
      onStopSignal: (h: (s: string) => void) => (signal = h),
      exit: (code: number) => (exits.push(code), resolveExit(code)),
    },
  };
}

const FATAL = 60;
const ERROR = 50;
const INFO = 30;

it('says in one last line that it stopped: what it left behind and the exit code; nothing after it', async () => {
  const h = harness();
  const left = { runsInFlight: 2, runsEnded: 1, runsInterrupted: 1, runsLeftRunning: 0, notificationsPending: 3, notificationsLeased: 0 };
  await runReplica({ ...h.edges, closeDatabase: async () => {}, start: async () => ({ stop: async () => left }) });
  h.send('SIGTERM');
  expect(await h.exited).toBe(0);
  expect(h.lines.map((l) => l.msg)).toEqual([
    'shutting down',
    'stopped (SIGTERM), exit 0: 2 runs in flight: 1 ended, 1 interrupted, 0 left running for another replica to fail once the lease runs out; 3 notifications pending for the other replicas',
  ]);
  expect(h.lines.at(-1)).toMatchObject({ level: INFO, signal: 'SIGTERM', exitCode: 0, ...left });
});

it('a stop told during start-up, and one that fails, end on the same last line (at error level when the exit is 1)', async () => {
  const early = harness();
  const starting = runReplica({ ...early.edges, closeDatabase: async () => {}, start: (signal) => new Promise<{ stop(): Promise<void> }>((_, reject) => signal.addEventListener('abort', () => reject(new Error('told to stop')))) });
  early.send('SIGINT');
  expect(await early.exited).toBe(0);
  await starting;
  expect(early.lines.at(-1)).toMatchObject({ level: INFO, msg: 'stopped (SIGINT), exit 0: nothing started', exitCode: 0 });

  const failed = harness();
  await runReplica({ ...failed.edges, closeDatabase: async () => {}, start: async () => ({ stop: async () => { throw new Error('slack socket would not close'); } }) });
  failed.send('SIGTERM');
  expect(await failed.exited).toBe(1);
  expect(failed.lines.at(-1)).toMatchObject({ level: ERROR, msg: 'stopped (SIGTERM), exit 1: with errors (above)', exitCode: 1 });
});

it('a stop that fails exits 1 with the reason logged', async () => {
  const h = harness();
  await runReplica({ ...h.edges, closeDatabase: async () => {}, start: async () => ({ stop: async () => { throw new Error('slack socket would not close'); } }) });
  h.send('SIGTERM');
  expect(await h.exited).toBe(1);
  expect(h.lines.find((l) => l.msg === 'stop failed')).toMatchObject({ level: ERROR, err: { message: 'slack socket would not close' } });
});

it('a database that fails to close exits 1 with the reason logged; a clean stop exits 0', async () => {
  const h = harness();
  await runReplica({ ...h.edges, closeDatabase: async () => { throw new Error('embedded postgres did not stop'); }, start: async () => ({ stop: async () => {} }) });
  h.send('SIGTERM');
  expect(await h.exited).toBe(1);
  expect(h.lines.find((l) => l.msg === 'database close failed')).toMatchObject({ level: ERROR, err: { message: 'embedded postgres did not stop' } });

  const clean = harness();
  await runReplica({ ...clean.edges, closeDatabase: async () => {}, start: async () => ({ stop: async () => {} }) });
  clean.send('SIGTERM');
  expect(await clean.exited).toBe(0);
});

it('SIGTERM during start-up exits 0 once the start-up gives up, without a fatal line and without the start-up exiting 1', async () => {
  const h = harness();
  let closed = 0;
  const running = runReplica({
    ...h.edges,
    closeDatabase: async () => void closed++,
    // A start-up waiting for its database: it ends when told to stop, failing as it would if the database were closed under it.
    start: (signal) => new Promise<{ stop(): Promise<void> }>((_, reject) => signal.addEventListener('abort', () => reject(new Error('Connection terminated')))),
  });
  h.send('SIGTERM');
  expect(await h.exited).toBe(0);
  await running;
  expect(h.exits).toEqual([0]);
  expect(closed).toBe(1);
  expect(h.lines.filter((l) => l.level >= FATAL)).toEqual([]);
});

it('SIGTERM while the app is being started: the app that comes up is stopped, then exit 0; it never says ready', async () => {
  const h = harness();
  let finishStart!: () => void;
  let stopped = 0;
  const said: string[] = [];
  const running = runReplica({
    ...h.edges,
    closeDatabase: async () => {},
    start: () => new Promise<{ stop(): Promise<void> }>((resolve) => (finishStart = () => resolve({ stop: async () => void stopped++ }))),
    started: () => said.push('ready'),
  });
  h.send('SIGTERM');
  finishStart();
  expect(await h.exited).toBe(0);
  await running;
  expect(stopped).toBe(1);
  expect(said).toEqual([]);
});

it('a start-up that fails on its own exits 1 with a fatal line', async () => {
  const h = harness();
  await runReplica({ ...h.edges, closeDatabase: async () => {}, start: async () => { throw new Error('migrations unknown to this version'); } });
  expect(await h.exited).toBe(1);
  expect(h.lines.find((l) => l.msg === 'start-up failed')).toMatchObject({ level: FATAL });
});

it('a start-up that fails on a setting (PORT in use) exits 2 with that one line, no stack', async () => {
  const h = harness();
  let closed = false;
  await runReplica({
    ...h.edges,
    closeDatabase: async () => void (closed = true),
    start: async () => {
      throw new ConfigError(['PORT=3000 HOST="0.0.0.0": cannot listen: the port is in use by another process (EADDRINUSE)']);
    },
  });
  expect(await h.exited).toBe(2);
  expect(closed).toBe(true);
  const fatal = h.lines.filter((l) => l.level === FATAL);
  expect(fatal).toEqual([expect.objectContaining({ msg: 'start-up failed: PORT=3000 HOST="0.0.0.0": cannot listen: the port is in use by another process (EADDRINUSE)' })]);
  expect(fatal[0]!.err).toBeUndefined();
});
