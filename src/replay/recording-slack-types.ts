import type { Clock } from '../clock.js';

/** What the recording Slack stand-in (recording-slack-api.ts) records, keeps and can be told to do. */

export type SlackFault =
  /** HTTP 429 with `Retry-After`; nothing stored. */
  | { kind: 'http_429'; retryAfterSeconds: number }
  /** HTTP 500; nothing stored. */
  | { kind: 'http_500' }
  /** HTTP 200 `{ok:false, error:"ratelimited"}`; nothing stored. */
  | { kind: 'ratelimited' }
  /** HTTP 200 `{ok:false, error}` (channel_not_found, is_archived…); nothing stored. */
  | { kind: 'platform_error'; error: string }
  /** The connection is reset before the call is handled; nothing stored. */
  | { kind: 'reset' }
  /** The call is handled and stored, then the connection drops before the answer. */
  | { kind: 'lost' }
  /** The call is handled and stored; the answer comes `delayMs` (real time) later, past a client timeout. */
  | { kind: 'slow'; delayMs: number }
  /**
   * The call is handled and stored, then answered HTTP 200 `{ok:false, error}`: Slack's
   * `internal_error` and `fatal_error`, after which "some aspect of the operation" may have succeeded.
   */
  | { kind: 'applied_error'; error: string };

export interface FaultMatch {
  /** How many matching calls get this fault (default 1). */
  times?: number;
  /** Only calls of this method (`chat.postMessage`…). */
  method?: string;
  /** Only calls for this channel. */
  channel?: string;
  /** Only replies in a thread (true) or only top-level calls (false). */
  inThread?: boolean;
}

export interface RecordedCall {
  seq: number;
  /** The injected clock's time when the call arrived. */
  at: Date;
  method: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
  text?: string;
  blocks?: unknown[];
  metadata?: SlackMetadata;
  /** Every argument as received (JSON-valued form fields parsed). */
  args: Record<string, unknown>;
  /** `ok`, or what went wrong: the fault kind or the platform error. */
  outcome: string;
}

export interface SlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  blocks?: unknown[];
  metadata?: SlackMetadata;
  /** How many times chat.update rewrote it. */
  updates: number;
}

export interface RecordedResponse {
  at: Date;
  id: string;
  body: Record<string, unknown>;
}

export interface RecordingSlackApiOptions {
  clock: Clock;
  /** Refuse a channel's chat.postMessage sooner than this after its previous one (429 + Retry-After). */
  postMessageMinIntervalMs?: number;
  botUserId?: string;
  teamId?: string;
  /** The WebSocket URL `apps.connections.open` hands out (Socket Mode); without it the method is unknown. */
  socketModeUrl?: string;
}
