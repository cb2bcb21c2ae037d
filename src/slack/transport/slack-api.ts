import { webApi } from '@slack/bolt';
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import { classifySlackError, slackResultLabel, type SlackFailure } from './classify-error.js';
import type { Block } from '../blocks/types.js';
import type { AlertMessageMetadata } from './metadata.js';

/**
 * The few Web API calls the outbox makes, with every failure classified and
 * counted. Two implementations: the real WebClient (HTTP and Socket Mode, or
 * SLACK_API_URL's stand-in) and the console sink.
 */
export type SlackCall<T> = ({ ok: true } & T) | ({ ok: false } & SlackFailure);

export interface PostArgs {
  channel: string;
  text: string;
  blocks: Block[];
  metadata: AlertMessageMetadata;
  threadTs?: string;
  /** A thread reply also shown in the channel (an escalation pages people there). */
  replyBroadcast?: boolean;
}

export interface SlackHistoryMessage {
  ts: string;
  /** The root a reply is in; never set on a root (Slack gives a parent with replies its own ts as thread_ts). */
  threadTs?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

export interface SlackOutboxApi {
  readonly mode: 'web' | 'console';
  postMessage(args: PostArgs): Promise<SlackCall<{ ts: string }>>;
  updateMessage(args: { channel: string; ts: string; text: string; blocks: Block[]; metadata?: AlertMessageMetadata }): Promise<SlackCall<object>>;
  /** Top-level messages of a channel newer than `oldest`, metadata included. */
  history(channel: string, oldest: Date, limit: number): Promise<SlackCall<{ messages: SlackHistoryMessage[] }>>;
  /** A thread's root and replies, metadata included. */
  replies(channel: string, rootTs: string): Promise<SlackCall<{ messages: SlackHistoryMessage[] }>>;
  publishHome(userId: string, view: Record<string, unknown>): Promise<SlackCall<object>>;
  /** Whether Slack accepts the bot token (auth.test): the probe of a workspace held for refused credentials. */
  authTest(): Promise<SlackCall<object>>;
}

/**
 * How long one Web API call may take, answer and body: an answer that trickles
 * in byte by byte is cut off too (the client's signal covers the body). Well
 * inside the outbox lease's send budget (48 s of the default minute, see
 * src/notify/lease-keeper.ts): a post cut off is an unknown outcome, looked up
 * by its key before any resend, never a send that outlives its lease.
 */
export const SLACK_CALL_TIMEOUT_MS = 10_000;

/**
 * fetch with a deadline on the whole call, for what Bolt sends itself
 * (respond() to a response_url, its WebClient's views.open and
 * chat.postEphemeral), which has none of its own: a Slack that stops
 * answering half-way must not hold a listener for ever.
 */
export function timedFetch(timeoutMs: number = SLACK_CALL_TIMEOUT_MS): typeof fetch {
  return (input, init = {}) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    return fetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
  };
}

/** A WebClient that leaves retries to the outbox: no retry chain, 429s rejected at once. */
export function createWebClient(token: string, options: { apiUrl?: string; timeoutMs?: number; logger: Logger }): InstanceType<typeof webApi.WebClient> {
  return new webApi.WebClient(token, {
    ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? SLACK_CALL_TIMEOUT_MS,
    logger: slackLogger(options.logger),
  });
}

/** @slack/logger's interface over pino, so the client's warnings land in our logs at debug. */
export function slackLogger(logger: Logger): webApi.Logger {
  const child = logger.child({ component: 'slack-web-api' });
  let level = webApi.LogLevel.INFO;
  return {
    debug: (...m: unknown[]) => child.debug(m.map(String).join(' ')),
    info: (...m: unknown[]) => child.debug(m.map(String).join(' ')),
    warn: (...m: unknown[]) => child.debug(m.map(String).join(' ')),
    error: (...m: unknown[]) => child.warn(m.map(String).join(' ')),
    setLevel: (l: webApi.LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

async function call<T>(method: string, mutating: boolean, run: () => Promise<T>): Promise<SlackCall<T>> {
  try {
    const data = await run();
    metrics.slackCalls.inc({ method, result: 'ok' });
    return { ok: true, ...data };
  } catch (error) {
    const failure = classifySlackError(error, mutating);
    metrics.slackCalls.inc({ method, result: slackResultLabel(failure, error) });
    return { ok: false, ...failure };
  }
}

type Msg = { ts?: string; thread_ts?: string; metadata?: SlackHistoryMessage['metadata'] };
// A root someone has replied to comes back with thread_ts equal to its ts: still a root, not a reply.
const toHistory = (m: Msg): SlackHistoryMessage => ({ ts: m.ts ?? '', threadTs: m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : undefined, metadata: m.metadata });

export function webOutboxApi(client: InstanceType<typeof webApi.WebClient>): SlackOutboxApi {
  return {
    mode: 'web',
    postMessage: (a) =>
      call('chat.postMessage', true, async () => {
        const args = {
          channel: a.channel,
          text: a.text,
          blocks: a.blocks as never,
          metadata: a.metadata,
          ...(a.threadTs ? { thread_ts: a.threadTs } : {}),
          unfurl_links: false,
          unfurl_media: false,
        };
        const r = await client.chat.postMessage(a.threadTs && a.replyBroadcast ? { ...args, thread_ts: a.threadTs, reply_broadcast: true } : args);
        return { ts: r.ts! };
      }),
    updateMessage: (a) =>
      call('chat.update', false, async () => {
        await client.chat.update({ channel: a.channel, ts: a.ts, text: a.text, blocks: a.blocks as never, ...(a.metadata ? { metadata: a.metadata } : {}) });
        return {};
      }),
    history: (channel, oldest, limit) =>
      call('conversations.history', false, async () => {
        const r = await client.conversations.history({ channel, oldest: (oldest.getTime() / 1000).toFixed(6), limit, include_all_metadata: true });
        return { messages: ((r.messages ?? []) as Msg[]).map(toHistory) };
      }),
    replies: (channel, rootTs) =>
      call('conversations.replies', false, async () => {
        const r = await client.conversations.replies({ channel, ts: rootTs, limit: 1000, include_all_metadata: true });
        return { messages: ((r.messages ?? []) as Msg[]).map(toHistory) };
      }),
    publishHome: (userId, view) =>
      call('views.publish', false, async () => {
        await client.views.publish({ user_id: userId, view: view as never });
        return {};
      }),
    authTest: () =>
      call('auth.test', false, async () => {
        await client.auth.test();
        return {};
      }),
  };
}
