import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/db/embedded.js';

const ENTRY = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Replica {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  /** Alive and past "ready on". */
  ready: boolean;
  process?: ChildProcess;
  /** The last lines it printed (for a report when something goes wrong). */
  tail: string[];
}

/**
 * The bot's real entry point as separate processes on one database, each on
 * its own port. `kill` is SIGKILL: no shutdown hook runs, exactly like a
 * crashed node or an OOM kill.
 */
export class ReplicaSet {
  readonly replicas: Replica[] = [];
  kills = 0;
  restarts = 0;
  /** Start-ups that failed (the database was down while it started): retried. */
  failedStarts = 0;

  private constructor(private readonly env: Record<string, string>) {}

  static async start(count: number, env: Record<string, string>): Promise<ReplicaSet> {
    const set = new ReplicaSet(env);
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      set.replicas.push({ name: `r${i + 1}`, port, url: `http://127.0.0.1:${port}`, ready: false, tail: [] });
    }
    await Promise.all(set.replicas.map((r) => set.launch(r)));
    return set;
  }

  live(): Replica[] {
    return this.replicas.filter((r) => r.ready);
  }

  /** A live replica at random, for spreading requests; undefined while none is up. */
  any(): Replica | undefined {
    const live = this.live();
    return live[Math.floor(Math.random() * live.length)];
  }

  /** Starts the replica and resolves once it answers /healthz (or rejects if it exits or takes too long). */
  async launch(replica: Replica): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: '1', ...this.env, PORT: String(replica.port), HOST: '127.0.0.1', REPLICA_ID: replica.name },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    replica.process = child;
    replica.ready = false;
    let exited = false;
    // CHAOS_LOG_DIR keeps every replica's full output (one file per replica) for a post-mortem.
    const logFile = process.env.CHAOS_LOG_DIR ? join(process.env.CHAOS_LOG_DIR, `${replica.name}.log`) : undefined;
    const onLine = (chunk: Buffer) => {
      if (logFile) appendFileSync(logFile, chunk);
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        replica.tail.push(line);
        if (replica.tail.length > 50) replica.tail.shift();
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.once('exit', () => {
      exited = true;
      replica.ready = false;
      if (replica.process === child) replica.process = undefined;
    });
    // Generous: on a loaded 2-core machine, tsx and the migrations alone can take a minute.
    const until = Date.now() + 180_000;
    while (!exited && Date.now() < until) {
      const res = await fetch(`${replica.url}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
      if (res?.ok && !exited) {
        replica.ready = true;
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!exited) child.kill('SIGKILL');
    throw new Error(`${replica.name} did not come up${exited ? ' (it exited)' : ' within 180 s'}:\n${replica.tail.slice(-10).join('\n')}`);
  }

  /** kill -9, then start it again after `downMs`; a start that fails (database down) is retried. */
  async killAndRestart(replica: Replica, downMs: number): Promise<void> {
    if (replica.process) {
      replica.ready = false;
      replica.process.kill('SIGKILL');
      this.kills++;
    }
    await new Promise((r) => setTimeout(r, downMs));
    await this.restart(replica);
  }

  async restart(replica: Replica): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await this.launch(replica);
        this.restarts++;
        return;
      } catch {
        this.failedStarts++;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    throw new Error(`${replica.name} could not be restarted:\n${replica.tail.join('\n')}`);
  }

  /** Processes that exited on their own (not by our kill): what a database outage must not cause. */
  exitedOnTheirOwn(): Replica[] {
    return this.replicas.filter((r) => !r.process || r.process.exitCode !== null);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.replicas.map(
        (r) =>
          new Promise<void>((resolve) => {
            const child = r.process;
            if (!child || child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
          }),
      ),
    );
  }
}
