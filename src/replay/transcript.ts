import type { Db } from '../db/connect.js';
import type { RecordedCall } from './recording-slack-api.js';

/** One message the bot posted or rewrote, as Slack received it. */
export interface TranscriptCall {
  at: string;
  method: 'chat.postMessage' | 'chat.update';
  channel: string;
  ts: string;
  thread_ts: string | null;
  text: string;
  blocks: unknown[];
  metadata: Record<string, unknown> | null;
}

export interface TranscriptSummary {
  /** Alerts opened during the replay. */
  alerts: number;
  /** Top-level messages: one per alert per channel. */
  roots: number;
  /** Messages posted in a thread. */
  replies: number;
  /** chat.update calls: roots re-rendered in place, and edited replies (a growing "also affected" list). */
  updates: number;
  /** Scheduled ticks whose verdict was a failure (failed or missed). */
  failedTicks: number;
}

/** The `--json` output: exactly this object. */
export interface Transcript {
  calls: TranscriptCall[];
  summary: TranscriptSummary;
}

const MESSAGE_METHODS = new Set(['chat.postMessage', 'chat.update']);

/**
 * The calls that changed what people see; lookups (history, replies) are the
 * sender's own business. In time order. Calls to different channels at one
 * instant went out concurrently, so their arrival order is a race: they are
 * listed in `channelOrder` (tenant channels, then the platform channel), which
 * keeps a transcript identical from run to run. Within a channel the order is
 * the real one: the sender sends one message per channel at a time.
 */
export function transcriptCalls(recorded: readonly RecordedCall[], channelOrder: readonly string[] = []): TranscriptCall[] {
  const rank = (channel: string | undefined) => {
    const i = channelOrder.indexOf(channel ?? '');
    return i < 0 ? channelOrder.length : i;
  };
  return recorded
    .filter((c) => MESSAGE_METHODS.has(c.method) && c.outcome === 'ok')
    .sort((a, b) => a.at.getTime() - b.at.getTime() || rank(a.channel) - rank(b.channel) || a.seq - b.seq)
    .map((c) => ({
      at: c.at.toISOString(),
      method: c.method as TranscriptCall['method'],
      channel: c.channel ?? '',
      ts: c.ts ?? '',
      thread_ts: c.method === 'chat.postMessage' ? (c.threadTs ?? null) : null,
      text: c.text ?? '',
      blocks: c.blocks ?? [],
      metadata: (c.metadata as unknown as Record<string, unknown> | undefined) ?? null,
    }));
}

export interface Tally {
  summary: TranscriptSummary;
  /** What a notifier posting once per failed tick in every channel would have sent. */
  oneMessagePerFailure: number;
}

export async function tally(db: Db, calls: readonly TranscriptCall[], platformChannel: string | undefined): Promise<Tally> {
  const posts = calls.filter((c) => c.method === 'chat.postMessage');
  const alerts = await db.selectFrom('alerts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const failed = await db
    .selectFrom('runs')
    .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select(['tenants.channel', (eb) => eb.fn.countAll<number>().as('n')])
    .where('runs.originalRunId', 'is', null)
    .where('runs.tick', 'is not', null)
    .where('runs.status', 'in', ['failed', 'missed'])
    .groupBy('tenants.channel')
    .execute();
  const channelsOf = (channel: string | null) => new Set([channel, platformChannel].filter(Boolean)).size;
  return {
    summary: {
      alerts: Number(alerts.n),
      roots: posts.filter((c) => c.thread_ts === null).length,
      replies: posts.filter((c) => c.thread_ts !== null).length,
      updates: calls.filter((c) => c.method === 'chat.update').length,
      failedTicks: failed.reduce((sum, r) => sum + Number(r.n), 0),
    },
    oneMessagePerFailure: failed.reduce((sum, r) => sum + Number(r.n) * channelsOf(r.channel), 0),
  };
}
