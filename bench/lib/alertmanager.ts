import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { waitUntil } from './stats.js';

/**
 * Prometheus Alertmanager as the alerting peer: Debian's package
 * (`sudo apt-get install -y prometheus-alertmanager`, which ships
 * /usr/bin/prometheus-alertmanager) or any `alertmanager` binary on PATH
 * (or ALERTMANAGER_BIN). Every process started here listens on loopback
 * only, its one receiver is a loopback webhook, and it is SIGKILLed when the
 * benchmark ends, even on error, and when the bench process exits.
 */

export interface AlertmanagerTimers {
  group_wait: string;
  group_interval: string;
  repeat_interval: string;
}

/** Alertmanager's documented route defaults. */
export const AM_DEFAULTS: AlertmanagerTimers = { group_wait: '30s', group_interval: '5m', repeat_interval: '4h' };
/** Its tightest: no wait before a new group's first notification, the smallest group interval it accepts; repeats left at 4h (a repeat is not a first notification). */
export const AM_TIGHTEST: AlertmanagerTimers = { group_wait: '0s', group_interval: '1ms', repeat_interval: '4h' };

export function alertmanagerBinary(): string | undefined {
  const candidates = [process.env.ALERTMANAGER_BIN, 'prometheus-alertmanager', 'alertmanager'].filter((c): c is string => !!c);
  for (const c of candidates) {
    const probe = spawnSync(c, ['--version'], { stdio: 'ignore' });
    if (probe.status === 0) return c;
  }
  return undefined;
}

export function alertmanagerVersion(bin: string): string {
  const out = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return /version ([\d.]+)/.exec(`${out.stdout}${out.stderr}`)?.[1] ?? 'unknown';
}

/** A free TCP port on loopback (its UDP twin, for gossip, is free in practice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every process started and not yet reaped, killed on the way out whatever happens. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface AlertmanagerNode {
  url: string;
  /** The command line it was started with (for the results). */
  args: string[];
  kill(): Promise<void>;
  /** A new process with the same flags, storage and ports; resolves when ready. */
  restart(): Promise<void>;
  output(): string;
}

export interface NodeSpec {
  bin: string;
  dir: string;
  name: string;
  webhookUrl: string;
  timers: AlertmanagerTimers;
  webPort: number;
  /** Cluster listen port and peers' ports; none for a single node (clustering off). */
  cluster?: { port: number; peers: number[] };
}

export async function startAlertmanager(spec: NodeSpec): Promise<AlertmanagerNode> {
  const dir = join(spec.dir, spec.name);
  await mkdir(join(dir, 'data'), { recursive: true });
  const config = join(dir, 'alertmanager.yml');
  // group_by '...': every failure is a group of its own, so each is notified on its own, as ours are.
  await writeFile(
    config,
    [
      'route:',
      '  receiver: bench',
      "  group_by: ['...']",
      ...Object.entries(spec.timers).map(([k, v]) => `  ${k}: ${v}`),
      'receivers:',
      '  - name: bench',
      '    webhook_configs:',
      `      - url: ${spec.webhookUrl}`,
      '        send_resolved: false',
      '',
    ].join('\n'),
  );
  const args = [
    `--config.file=${config}`,
    `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${spec.webPort}`,
    ...(spec.cluster
      ? [
          `--cluster.listen-address=127.0.0.1:${spec.cluster.port}`,
          `--cluster.advertise-address=127.0.0.1:${spec.cluster.port}`,
          ...spec.cluster.peers.map((p) => `--cluster.peer=127.0.0.1:${p}`),
        ]
      : ['--cluster.listen-address=']),
  ];
  const url = `http://127.0.0.1:${spec.webPort}`;
  let child: ChildProcess;
  let log = '';
  const launch = async () => {
    child = spawn(spec.bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    live.add(child);
    const c = child;
    c.once('exit', () => live.delete(c));
    const collect = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000));
    c.stdout?.on('data', collect);
    c.stderr?.on('data', collect);
    await waitUntil(
      async () => {
        if (c.exitCode !== null) throw new Error(`alertmanager ${spec.name} exited with ${c.exitCode}:\n${log}`);
        return fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
      },
      60_000,
      50,
      `alertmanager ${spec.name} ready`,
    );
  };
  await launch();
  return {
    url,
    args,
    async kill() {
      const c = child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
    restart: launch,
    output: () => log,
  };
}

/** Kills every Alertmanager still running (the benchmark's finally). */
export async function killAllAlertmanagers(): Promise<void> {
  await Promise.all(
    [...live].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}

/** Alerts as Prometheus posts them (API v2); endsAt left out, so each fires for resolve_timeout. */
export async function postAlerts(url: string, alerts: { labels: Record<string, string>; annotations?: Record<string, string> }[]): Promise<boolean> {
  const startsAt = new Date().toISOString();
  try {
    const res = await fetch(`${url}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts.map((a) => ({ ...a, startsAt }))) });
    return res.ok;
  } catch {
    return false;
  }
}
