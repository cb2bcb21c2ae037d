import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { SlackFault, FaultMatch, RecordedCall, SlackMetadata, StoredMessage, RecordedResponse, RecordingSlackApiOptions } from './recording-slack-types.js';
import { StandInDirectory } from './recording-slack-directory.js';
import { isMetadata, parseBody, readBody, refuse, sendJson, str } from './recording-slack-wire.js';

/**
 * A stand-in for Slack's Web API on loopback: it keeps the messages it is
 * sent, records every call, and can misbehave on request. Tests, the replay
 * command, the benchmarks and the chaos suite point SLACK_API_URL at it.
 *
 * Misbehaviour is explicit: `failNext(fault, { times, method, channel, inThread })`
 * queues faults that match calls in arrival order. A fault either refuses the
 * call before anything is stored (429, 500, ratelimited, platform error,
 * reset) or stores first and then fails to answer (lost, slow): the two cases
 * a sender must tell apart.
 */

export type { SlackFault, FaultMatch, RecordedCall, SlackMetadata, StoredMessage, RecordedResponse, RecordingSlackApiOptions } from './recording-slack-types.js';

type QueuedFault = { fault: SlackFault; match: FaultMatch; left: number };

const BOT_ID = 'B0SCHEDBOT';

export class RecordingSlackApi {
  readonly calls: RecordedCall[] = [];
  readonly responses: RecordedResponse[] = [];
  /** The last view published per user (App Home) and every view opened (modals). */
  readonly homeViews = new Map<string, unknown>();
  readonly openedViews: { triggerId: string; view: unknown }[] = [];
  /** The workspace's people (conversations.members, usergroups.users.list, users.info); set by tests. */
  readonly directory: StandInDirectory;
  readonly channelMembers: Map<string, string[]>;
  readonly groupMembers: Map<string, string[]>;
  private readonly stored: StoredMessage[] = [];
  private readonly faults: QueuedFault[] = [];
  private readonly lastPost = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  /** Slow answers still on their way (the call itself is already stored). */
  private readonly slowAnswers = new Set<Promise<void>>();
  private seq = 0;
  private tsSeq = 0;
  /** While set, answers to response_url wait for it (a slow Slack, for races). */
  private responseGate: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    private readonly options: RecordingSlackApiOptions,
  ) {
    this.directory = new StandInDirectory(options.teamId ?? 'T0TEST', options.botUserId ?? 'U0SCHEDBOT');
    this.channelMembers = this.directory.channelMembers;
    this.groupMembers = this.directory.groupMembers;
  }

  static async start(options: RecordingSlackApiOptions): Promise<RecordingSlackApi> {
    let api: RecordingSlackApi | undefined;
    const server = createServer((req, res) => void api!.handle(req, res));
    api = new RecordingSlackApi(server, options);
    server.on('connection', (socket) => {
      api!.sockets.add(socket);
      socket.once('close', () => api!.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return api;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** For SLACK_API_URL / WebClient's slackApiUrl: ends with `/api/`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /** A response_url Slack would put in a command or action payload. */
  responseUrl(id = `r${++this.seq}`): string {
    return `http://127.0.0.1:${this.port}/response/${id}`;
  }

  failNext(fault: SlackFault, match: FaultMatch = {}): void {
    this.faults.push({ fault, match, left: match.times ?? 1 });
  }

  /** Holds every response_url request (unrecorded, unanswered) until the returned function is called. */
  holdResponses(): () => void {
    let release!: () => void;
    this.responseGate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.responseGate = undefined;
      release();
    };
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Messages as Slack holds them now, oldest first; optionally one channel's. */
  messages(channel?: string): StoredMessage[] {
    return this.stored.filter((m) => channel === undefined || m.channel === channel);
  }

  /** Top-level messages of a channel, oldest first. */
  roots(channel: string): StoredMessage[] {
    return this.stored.filter((m) => m.channel === channel && !m.threadTs);
  }

  /** The replies under a root, oldest first (the root excluded). */
  replies(channel: string, rootTs: string): StoredMessage[] {
    return this.stored.filter((m) => m.channel === channel && m.threadTs === rootTs);
  }

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/response/') && this.responseGate) await this.responseGate;
    const at = this.options.clock.now();
    if (url.pathname.startsWith('/response/')) {
      const body = parseBody(raw, req.headers['content-type']);
      this.responses.push({ at, id: url.pathname.slice('/response/'.length), body });
      return sendJson(res, 200, { ok: true });
    }
    const method = url.pathname.replace(/^\/api\//, '');
    const args = { ...Object.fromEntries(url.searchParams), ...parseBody(raw, req.headers['content-type']) };
    const call: RecordedCall = {
      seq: ++this.seq,
      at,
      method,
      channel: str(args.channel),
      ts: str(args.ts),
      threadTs: str(args.thread_ts),
      text: str(args.text),
      blocks: Array.isArray(args.blocks) ? args.blocks : undefined,
      metadata: isMetadata(args.metadata) ? args.metadata : undefined,
      args,
      outcome: 'ok',
    };
    this.calls.push(call);

    const fault = this.takeFault(call);
    if (fault && fault.kind !== 'lost' && fault.kind !== 'slow' && fault.kind !== 'applied_error') {
      call.outcome = fault.kind === 'platform_error' ? fault.error : fault.kind;
      return refuse(req, res, fault);
    }

    const interval = this.options.postMessageMinIntervalMs;
    if (method === 'chat.postMessage' && interval && call.channel) {
      const last = this.lastPost.get(call.channel);
      const wait = last === undefined ? 0 : last + interval - at.getTime();
      if (wait > 0) {
        call.outcome = 'rate_limited';
        res.setHeader('Retry-After', String(Math.ceil(wait / 1000)));
        return sendJson(res, 429, { ok: false, error: 'ratelimited' });
      }
      this.lastPost.set(call.channel, at.getTime());
    }

    // Slack opens Socket Mode connections only for an app-level token; a bot token gets not_allowed_token_type.
    const answer =
      method === 'apps.connections.open' && !/^Bearer xapp-/.test(req.headers.authorization ?? '') ? { ok: false, error: 'not_allowed_token_type' } : this.apply(call, at);
    if (!answer.ok) call.outcome = String(answer.error);
    if (fault?.kind === 'applied_error') {
      call.outcome = fault.error;
      return sendJson(res, 200, { ok: false, error: fault.error });
    }
    if (fault?.kind === 'lost') {
      call.outcome = 'lost';
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'slow') {
      call.outcome = 'slow';
      const delay = new Promise<void>((r) => setTimeout(r, fault.delayMs));
      this.slowAnswers.add(delay);
      await delay.finally(() => this.slowAnswers.delete(delay));
      if (res.destroyed || req.socket.destroyed) return;
    }
    sendJson(res, 200, answer);
  }

  /** Resolves once every slow answer has been sent (or dropped with its client): nothing more will arrive. */
  async answered(): Promise<void> {
    while (this.slowAnswers.size > 0) await Promise.all([...this.slowAnswers]);
  }

  private takeFault(call: RecordedCall): SlackFault | undefined {
    const i = this.faults.findIndex(
      (f) =>
        (!f.match.method || f.match.method === call.method) &&
        (!f.match.channel || f.match.channel === call.channel) &&
        (f.match.inThread === undefined || f.match.inThread === !!call.threadTs),
    );
    if (i < 0) return undefined;
    const queued = this.faults[i]!;
    if (--queued.left <= 0) this.faults.splice(i, 1);
    return queued.fault;
  }

  private nextTs(at: Date): string {
    return `${Math.floor(at.getTime() / 1000)}.${String(++this.tsSeq % 1_000_000).padStart(6, '0')}`;
  }

  private apply(call: RecordedCall, at: Date): Record<string, unknown> {
    const a = call.args;
    const fromDirectory = this.directory.answer(call.method, a, call.channel);
    if (fromDirectory) return fromDirectory;
    switch (call.method) {
      case 'auth.test':
        return { ok: true, url: 'https://example.slack.com/', team: 'Example', user: 'scheduler', team_id: this.options.teamId ?? 'T0TEST', user_id: this.options.botUserId ?? 'U0SCHEDBOT', bot_id: BOT_ID };
      case 'chat.postMessage': {
        if (!call.channel) return { ok: false, error: 'channel_not_found' };
        if (!call.text && !call.blocks) return { ok: false, error: 'no_text' };
        if (call.threadTs && !this.stored.some((m) => m.channel === call.channel && m.ts === call.threadTs && !m.threadTs)) {
          return { ok: false, error: 'thread_not_found' };
        }
        const message: StoredMessage = { channel: call.channel, ts: this.nextTs(at), threadTs: call.threadTs, text: call.text ?? '', blocks: call.blocks, metadata: call.metadata, updates: 0 };
        this.stored.push(message);
        call.ts = message.ts;
        return { ok: true, channel: message.channel, ts: message.ts, message: this.wire(message, true) };
      }
      case 'chat.update': {
        const message = this.stored.find((m) => m.channel === call.channel && m.ts === call.ts);
        if (!message) return { ok: false, error: 'message_not_found' };
        if (call.text !== undefined) message.text = call.text;
        if (call.blocks) message.blocks = call.blocks;
        if (call.metadata) message.metadata = call.metadata;
        message.updates++;
        return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
      }
      case 'chat.postEphemeral':
        if (!call.channel || !str(a.user)) return { ok: false, error: 'channel_not_found' };
        return { ok: true, message_ts: this.nextTs(at) };
      case 'conversations.history': {
        const withMeta = a.include_all_metadata === true || a.include_all_metadata === 'true';
        const limit = Number(a.limit ?? 100);
        const messages = this.roots(call.channel ?? '')
          .slice()
          .reverse()
          .slice(0, limit)
          .map((m) => this.wire(m, withMeta));
        return { ok: true, messages, has_more: false };
      }
      case 'conversations.replies': {
        const withMeta = a.include_all_metadata === true || a.include_all_metadata === 'true';
        const root = this.stored.find((m) => m.channel === call.channel && m.ts === call.ts && !m.threadTs);
        if (!root) return { ok: false, error: 'thread_not_found' };
        const limit = Number(a.limit ?? 1000);
        const messages = [root, ...this.replies(root.channel, root.ts)].slice(0, limit).map((m) => this.wire(m, withMeta));
        return { ok: true, messages, has_more: false };
      }
      case 'views.publish': {
        const user = str(a.user_id);
        if (!user) return { ok: false, error: 'invalid_arguments' };
        this.homeViews.set(user, a.view);
        return { ok: true, view: { id: `V${call.seq}`, ...(a.view as object) } };
      }
      case 'apps.connections.open':
        return this.options.socketModeUrl ? { ok: true, url: this.options.socketModeUrl } : { ok: false, error: 'unknown_method' };
      case 'views.open': {
        const triggerId = str(a.trigger_id);
        if (!triggerId) return { ok: false, error: 'invalid_trigger_id' };
        this.openedViews.push({ triggerId, view: a.view });
        return { ok: true, view: { id: `V${call.seq}`, ...(a.view as object) } };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  private wire(m: StoredMessage, withMetadata: boolean): Record<string, unknown> {
    // As Slack does, a parent with replies carries thread_ts too (its own ts) and its reply count.
    const replyCount = m.threadTs ? 0 : this.stored.filter((r) => r.channel === m.channel && r.threadTs === m.ts).length;
    return {
      type: 'message',
      ts: m.ts,
      ...(m.threadTs ? { thread_ts: m.threadTs } : replyCount > 0 ? { thread_ts: m.ts, reply_count: replyCount } : {}),
      text: m.text,
      bot_id: BOT_ID,
      ...(m.blocks ? { blocks: m.blocks } : {}),
      ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
    };
  }
}
