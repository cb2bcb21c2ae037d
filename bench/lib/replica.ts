import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('../worker-process.ts', import.meta.url));

export type ReplicaMode = 'engine' | 'app' | 'graphile' | 'pgboss';

export interface Replica {
  /** Resolves once the process has loaded (and, in app mode, started). */
  ready: Promise<void>;
  /** The `ready` message: its pid and, in app mode, the HTTP port it listens on. */
  info: Promise<{ pid: number; port?: number }>;
  /** Starts its loops (engine and graphile modes); resolves when they are running. */
  go(): Promise<void>;
  /** Stops it gracefully; resolves with its peak resident memory. */
  stop(): Promise<{ rssPeakBytes: number }>;
  /** SIGKILL, no goodbye (a crashed replica); resolves once it has exited. */
  kill(): Promise<void>;
  output(): string;
}

/** A replica as a separate process (bench/worker-process.ts), the way replicas run in production. */
export function spawnReplica(mode: ReplicaMode, env: Record<string, string>): Replica {
  // BENCH_CPU_PROF=<dir>: each replica writes a V8 CPU profile there (open it in Chrome DevTools or speedscope).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', WORKER], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: '1', LOG_LEVEL: 'warn', BENCH_MODE: mode, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiting = new Map<string, (m: Record<string, unknown>) => void>();
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      out += `${line}\n`;
      try {
        const message = JSON.parse(line) as { type?: string };
        if (message.type) waiting.get(message.type)?.(message);
      } catch {
        // not one of ours (a stray log line)
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Start-up is slow on a loaded machine (tsx compiles the app): three minutes before calling it dead.
  const expect = (type: string, timeoutMs = 180_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`replica (${mode}) sent no ${type} in ${timeoutMs} ms; stderr:\n${err}`)), timeoutMs);
      waiting.set(type, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`replica (${mode}) exited with ${code} before ${type}; stderr:\n${err}`));
      });
    });
  const info = expect('ready').then((m) => m as unknown as { pid: number; port?: number });
  const ready = info.then(() => {});
  ready.catch(() => {});
  info.catch(() => {});
  return {
    ready,
    info,
    async go() {
      const started = expect('started');
      child.stdin.write('go\n');
      await started;
    },
    async stop() {
      if (child.exitCode !== null) throw new Error(`replica (${mode}) already exited with ${child.exitCode}; stderr:\n${err}`);
      const stopped = expect('stopped', 30_000);
      child.stdin.write('stop\n');
      const m = await stopped;
      await exited;
      return { rssPeakBytes: Number(m.rssPeakBytes) };
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    output: () => `${out}\n${err}`,
  };
}
