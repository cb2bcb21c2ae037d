import { sql } from 'kysely';
import { systemClock } from '../src/clock.js';
import { RecordingSlackApi } from '../src/replay/recording-slack-api.js';
import { finishRun } from '../src/ledger/runs.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { spawnReplica } from './lib/replica.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { percentile, round, waitUntil } from './lib/stats.js';

/**
 * Benchmark 2: from the commit that finishes a failed run (its policy alerts
 * on the first failure, no retries) to the local Slack Web API receiving the
 * alert's root chat.postMessage. One whole replica (startApp) in a process of
 * its own, woken by LISTEN/NOTIFY; the 30 s poll interval never helps.
 * Alerts are spread over time and over 50 channels so that Slack's pace (one
 * message a second per channel) is never what is measured.
 */
const NAME = 'failure-to-Slack latency';
const CHANNELS = 50;
const SIZES = { smoke: { alerts: 20, spacingMs: 25 }, quick: { alerts: 500, spacingMs: 25 }, full: { alerts: 500, spacingMs: 25 } };
const TICK = new Date('2026-01-01T00:00:00Z');

export async function failureLatency(ctx: BenchContext): Promise<Figure[]> {
  const { alerts, spacingMs } = SIZES[ctx.size];
  const database = await freshDatabase(ctx.adminUrl, 'latency');
  const { db, url } = database;
  const slack = await RecordingSlackApi.start({ clock: systemClock });
  try {
    await seedTenants(db, CHANNELS, (i) => `CLAT${i}`);
    await seedWorkflows(db, { count: alerts, tenants: CHANNELS, policy: { alertAfter: 1, retries: 0 } });
    // One running run per workflow, each to be finished as failed in turn.
    const { rows: runs } = await sql<{ id: number; name: string }>`
      insert into runs (workflow_id, tick, trigger, status, started_at, deadline_at)
      select id, ${TICK}, 'external', 'running', ${TICK}, ${TICK}::timestamptz + interval '10 years' from workflows order by id
      returning id, (select name from workflows w where w.id = workflow_id) as name
    `.execute(db);
    const replica = spawnReplica('app', {
      DATABASE_URL: url,
      REPLICA_ID: 'bench-latency',
      PORT: '0',
      HOST: '127.0.0.1',
      SLACK_BOT_TOKEN: 'xoxb-bench',
      SLACK_SIGNING_SECRET: 'bench-signing-secret',
      SLACK_API_URL: slack.url,
    });
    const committedAt = new Map<string, number>();
    try {
      await replica.ready;
      // The LISTEN connection is opened after start-up; give it a moment before the first NOTIFY.
      await new Promise((r) => setTimeout(r, 1000));
      const deps = { db, clock: systemClock };
      const t0 = performance.now();
      for (let i = 0; i < runs.length; i++) {
        const due = t0 + i * spacingMs;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const run = runs[i]!;
        const result = await finishRun(deps, run.id, { status: 'failed', error: `connection to db-${i % 7} refused` });
        if (result.kind !== 'finished') throw new Error(`run ${run.id} did not finish: ${result.kind}`);
        committedAt.set(run.name, systemClock.now().getTime());
      }
      await waitUntil(async () => rootPosts(slack).size >= runs.length, 60_000, 50, 'every root posted');
    } finally {
      await replica.stop();
    }
    const posted = rootPosts(slack);
    const latencies = [...committedAt].map(([name, at]) => posted.get(name)! - at);
    const params = { alerts, measured: latencies.length, channels: CHANNELS, spacingMs, replicas: 1, wakeups: 'LISTEN/NOTIFY', pollIntervalSeconds: 30, resolution: '1 ms' };
    return [
      figure(NAME, 'p50', percentile(latencies, 50), 'ms', params, '< 100'),
      figure(NAME, 'p99', percentile(latencies, 99), 'ms', params, '< 1000'),
      figure(NAME, 'max', Math.max(...latencies), 'ms', params),
    ].map((f) => ({ ...f, value: round(f.value, 0) }));
  } finally {
    await slack.close();
    await database.drop();
  }
}

/** Workflow name → when its first successful root chat.postMessage arrived. */
function rootPosts(slack: RecordingSlackApi): Map<string, number> {
  const out = new Map<string, number>();
  for (const call of slack.callsTo('chat.postMessage')) {
    if (call.outcome !== 'ok' || call.threadTs) continue;
    const workflow = call.metadata?.event_payload.workflow;
    if (typeof workflow === 'string' && !out.has(workflow)) out.set(workflow, call.at.getTime());
  }
  return out;
}
