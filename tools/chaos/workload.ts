import { sql } from 'kysely';
import { systemClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connect.js';
import { ACTION } from '../../src/slack/blocks/ids.js';
import type { ReplicaSet } from './replicas.js';
import { signSlackRequest } from './slack-signature.js';

/**
 * What the driver does to the bot, and what it therefore expects. Scripted
 * workflows are observed (or managed with a schedule that never fires during
 * the run) and get their runs reported over the API for explicit past ticks,
 * one step at a time: each step waits for its effect in the ledger, so the
 * story each alert must tell is known in advance.
 */

export const PATTERNS = ['healthy', 'transient', 'outage', 'owned', 'manual'] as const;
export type Pattern = (typeof PATTERNS)[number];

/** The notified events each pattern's alert must show, in order (`+` = one or more). */
export const EXPECTED_STORY: Record<Pattern, string[] | null> = {
  healthy: null,
  transient: null,
  outage: ['opened', 'escalated', 'resolved'],
  owned: ['opened', 'owner_changed', 'resolved'],
  manual: ['opened', 'run_requested+', 'resolved'],
};

export interface ScriptedWorkflow {
  tenant: string;
  name: string;
  channel: string;
  pattern: Pattern;
}

/** Every-minute managed workflows whose real ticks the scheduler fires; two of them misbehave. */
export interface ScheduledWorkflow {
  tenant: string;
  name: string;
  fault: 'none' | 'hang' | 'signal';
}

/** The person who clicks in the driver's stories and opens the App Home at the end. */ export const ONCALL_USER = 'U0ONCALL';
export interface Workload {
  tenants: { id: string; channel: string }[];
  scripted: ScriptedWorkflow[];
  scheduled: ScheduledWorkflow[];
  file: Record<string, unknown>;
}

const TENANTS = 40;
const FIRST_TICK = Date.parse('2026-01-01T00:00:00Z');
// Fires only on 1 January: the past ticks the driver reports are real fire times,
// and no tick falls due (nothing is missed) while the suite runs.
const SCRIPTED_CRON = '*/5 * 1 1 *';
const POLICY = { alertAfter: 2, retries: 0, recoverAfter: 1 };

export function buildWorkload(count: number, launchLog: string): Workload {
  const tenants = Array.from({ length: TENANTS }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, name: `Tenant ${i}`, channel: `CT${String(i).padStart(2, '0')}` }));
  const scripted: ScriptedWorkflow[] = Array.from({ length: count }, (_, i) => {
    const tenant = tenants[i % TENANTS]!;
    return { tenant: tenant.id, name: `w${String(i).padStart(3, '0')}`, channel: tenant.channel, pattern: PATTERNS[i % PATTERNS.length]! };
  });
  const scheduled: ScheduledWorkflow[] = [
    ...Array.from({ length: 4 }, (_, i) => ({ tenant: 't00', name: `every-minute-${i}`, fault: 'none' as const })),
    { tenant: 't01', name: 'every-minute-hangs', fault: 'hang' },
    { tenant: 't02', name: 'every-minute-killed', fault: 'signal' },
  ];
  const command = (w: ScheduledWorkflow) => {
    const record = `echo "$WORKFLOW $TICK $ATTEMPT" >> ${launchLog}`;
    if (w.fault === 'hang') return `${record}; sleep 600`;
    if (w.fault === 'signal') return `${record}; kill -KILL $$`;
    return record;
  };
  const file = {
    tenants,
    workflows: [
      ...scripted.map((w) => ({
        tenant: w.tenant,
        name: w.name,
        cron: SCRIPTED_CRON,
        policy: POLICY,
        ...(w.pattern === 'manual' ? { launcher: { kind: 'command', command: 'echo manual run' } } : {}),
      })),
      ...scheduled.map((w) => ({
        tenant: w.tenant,
        name: w.name,
        cron: '* * * * *',
        launcher: { kind: 'command', command: command(w) },
        policy: { alertAfter: 1, retries: 0, timeoutSeconds: 5 },
      })),
    ],
  };
  return { tenants, scripted, scheduled, file };
}

export interface DriverStats {
  reports: number;
  clicks: number;
  runNows: number;
  /** Requests that failed (replica gone, database down) and were sent again. */
  resent: number;
  /** Scripts that did not finish: each is a finding. */
  stuck: string[];
}

export interface DriverOptions {
  db: Db;
  replicas: ReplicaSet;
  apiToken: string;
  signingSecret: string;
  /** How long one step may wait for its effect before the script is reported stuck. */
  stepTimeoutMs: number;
  log?: (line: string) => void;
}

/** Runs every scripted workflow's story concurrently; resolves when all have finished or given up. */
export async function driveWorkload(workload: Workload, o: DriverOptions): Promise<DriverStats> {
  const stats: DriverStats = { reports: 0, clicks: 0, runNows: 0, resent: 0, stuck: [] };
  const d = new Driver(o, stats);
  let finished = 0;
  const progress = setInterval(() => o.log?.(`driver: ${finished}/${workload.scripted.length} scripts done, ${stats.reports} reports, ${stats.resent} resends`), 10_000);
  await Promise.all(
    workload.scripted.map(async (w, i) => {
      // Spread the start so the first reports do not all land in the same instant.
      await systemClock.sleep((i % 50) * 40);
      try {
        await d.script(w);
      } catch (error) {
        stats.stuck.push(`${w.tenant}/${w.name} (${w.pattern}): ${error instanceof Error ? error.message : String(error)}`);
      }
      finished++;
    }),
  );
  clearInterval(progress);
  return stats;
}

const tickAt = (k: number) => new Date(FIRST_TICK + k * 5 * 60_000);

class Driver {
  constructor(
    private readonly o: DriverOptions,
    private readonly stats: DriverStats,
  ) {}

  async script(w: ScriptedWorkflow): Promise<void> {
    const steps: Record<Pattern, () => Promise<void>> = {
      healthy: async () => {
        for (let k = 0; k < 3; k++) await this.report(w, k, 'succeeded');
      },
      transient: async () => {
        for (let k = 0; k < 4; k++) await this.report(w, k, k % 2 ? 'succeeded' : 'failed');
      },
      outage: async () => {
        await this.report(w, 0, 'failed');
        await this.report(w, 1, 'failed');
        await this.until(w, 'alert open', (a) => a?.status === 'open');
        await this.report(w, 2, 'failed');
        await this.report(w, 3, 'failed');
        await this.until(w, 'alert escalated', (a) => a?.severity === 'critical');
        await this.report(w, 4, 'succeeded');
        await this.until(w, 'alert resolved', (a) => a?.status === 'resolved');
      },
      owned: async () => {
        await this.report(w, 0, 'failed');
        await this.report(w, 1, 'failed');
        const alert = await this.until(w, 'alert open', (a) => a?.status === 'open');
        await this.retrying('take ownership', async () => {
          await this.clickTakeOwnership(w, alert!.id);
          const now = await this.alertOf(w);
          return now?.acknowledgedAt != null;
        });
        await this.report(w, 2, 'failed');
        await this.report(w, 3, 'failed');
        await this.report(w, 4, 'succeeded');
        await this.until(w, 'alert resolved', (a) => a?.status === 'resolved');
      },
      manual: async () => {
        await this.report(w, 0, 'failed');
        await this.report(w, 1, 'failed');
        await this.until(w, 'alert open', (a) => a?.status === 'open');
        // A manual run whose replica dies ends "worker lost"; ask again until one succeeds.
        await this.retrying('run now until resolved', async () => {
          await this.runNow(w);
          return (await this.alertOf(w))?.status === 'resolved';
        }, 5_000);
      },
    };
    await steps[w.pattern]();
  }

  /** Reports one run for tick k (idempotent by externalId), then waits until the engine has evaluated it. */
  private async report(w: ScriptedWorkflow, k: number, status: 'succeeded' | 'failed'): Promise<void> {
    const tick = tickAt(k);
    const body = { tenant: w.tenant, workflow: w.name, status, tick: tick.toISOString(), externalId: `${w.name}:${k}`, ...(status === 'failed' ? { error: `step ${k}: upstream returned 503 for batch ${k * 7919}` } : {}) };
    await this.retrying(`report tick ${k}`, async () => {
      const res = await this.api('POST', '/api/v1/runs', body);
      return res === 200 || res === 201;
    });
    this.stats.reports++;
    await this.retrying(`tick ${k} evaluated`, async () => {
      const row = await this.o.db
        .selectFrom('runs')
        .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
        .select('runs.processedAt')
        .where('workflows.tenantId', '=', w.tenant)
        .where('workflows.name', '=', w.name)
        .where('runs.tick', '=', tick)
        .executeTakeFirst();
      return row?.processedAt != null;
    }, 200);
  }

  private async runNow(w: ScriptedWorkflow): Promise<void> {
    const status = await this.api('POST', `/api/v1/workflows/${w.tenant}/${w.name}/run`, {});
    if (status === 202) this.stats.runNows++;
  }

  private async clickTakeOwnership(w: ScriptedWorkflow, alertId: number): Promise<void> {
    const payload = {
      type: 'block_actions',
      team: { id: 'T0CHAOS', domain: 'chaos' },
      user: { id: ONCALL_USER, username: 'oncall', team_id: 'T0CHAOS' },
      api_app_id: 'A0CHAOS',
      token: 'legacy',
      container: { type: 'message', message_ts: '1.0', channel_id: w.channel, is_ephemeral: false },
      trigger_id: `trigger-${alertId}-${this.stats.clicks + 1}`, // every click its own, as Slack's are (a repeated body is a replay: 401)
      channel: { id: w.channel, name: w.tenant },
      message: { type: 'message', ts: '1.0', text: 'root' },
      response_url: 'http://127.0.0.1:9/unused',
      actions: [{ action_id: ACTION.takeOwnership, block_id: 'alert_actions', action_ts: `${this.stats.clicks + 1}.0`, type: 'button', value: String(alertId) }],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const replica = this.o.replicas.any();
    if (!replica) return;
    this.stats.clicks++;
    await fetch(`${replica.url}/slack/events`, { method: 'POST', headers: signSlackRequest(this.o.signingSecret, body), body, signal: AbortSignal.timeout(5_000) }).catch(() => {
      this.stats.resent++;
    });
  }

  private async api(method: string, path: string, body: unknown): Promise<number | undefined> {
    const replica = this.o.replicas.any();
    if (!replica) return undefined;
    try {
      const res = await fetch(`${replica.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.o.apiToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await res.text();
      return res.status;
    } catch {
      return undefined;
    }
  }

  private async alertOf(w: ScriptedWorkflow) {
    return this.o.db
      .selectFrom('alerts')
      .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
      .select(['alerts.id', 'alerts.status', 'alerts.severity', 'alerts.acknowledgedAt'])
      .where('workflows.tenantId', '=', w.tenant)
      .where('workflows.name', '=', w.name)
      .orderBy('alerts.id', 'desc')
      .executeTakeFirst();
  }

  private async until(w: ScriptedWorkflow, what: string, ok: (a: Awaited<ReturnType<Driver['alertOf']>>) => boolean) {
    let found: Awaited<ReturnType<Driver['alertOf']>>;
    await this.retrying(what, async () => ok((found = await this.alertOf(w))), 200);
    return found;
  }

  /**
   * Tries `attempt` until it says done, through replicas dying and the
   * database going away; gives up after the step timeout. Like a real
   * client, it backs off (doubling from `pauseMs` to 2 s, jittered): 200
   * scripts retrying at a fixed pace during an outage are a retry storm
   * that the replicas then spend their CPU refusing.
   */
  private async retrying(what: string, attempt: () => Promise<boolean>, pauseMs = 500): Promise<void> {
    const until = systemClock.now().getTime() + this.o.stepTimeoutMs;
    let tries = 0;
    for (;;) {
      let done = false;
      try {
        done = await attempt();
      } catch {
        done = false;
      }
      if (done) return;
      if (++tries > 1 && pauseMs >= 500) this.stats.resent++;
      if (systemClock.now().getTime() > until) throw new Error(`${what}: not done after ${this.o.stepTimeoutMs / 1000}s`);
      const pause = Math.min(Math.max(pauseMs, 2_000), pauseMs * 2 ** Math.min(tries - 1, 5));
      await systemClock.sleep(pause / 2 + (Math.random() * pause) / 2);
    }
  }
}
