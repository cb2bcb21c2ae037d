import { webApi } from '@slack/bolt';
import { capRetryAfterMs } from '../../domain/retry-after.js';

const { ErrorCode } = webApi;

/**
 * Slack errors, classified once. "Unknown" is only possible for calls that
 * change something (a post): the request went out and the answer did not
 * come back, so it may or may not have been applied.
 */
export type SlackFailure =
  | { kind: 'rate_limited'; retryAfterMs: number; error: string }
  | { kind: 'permanent'; error: string }
  | { kind: 'credentials'; error: string }
  | { kind: 'transient'; error: string }
  | { kind: 'unknown'; error: string };

/**
 * Errors that may pass: Slack's own trouble (`internal_error`, `fatal_error`,
 * `service_unavailable`, `request_timeout`: the body arrived cut short), a
 * workspace migrating to an Enterprise org, an answer with no error code.
 * Retried with back-off, holding the channel. Every other error Slack gives
 * says the call as made is wrong or not allowed (`channel_not_found`,
 * `msg_too_long`, `invalid_blocks`, `metadata_too_large`,
 * `restricted_action_read_only_channel`, and whatever code it adds next) and
 * fails the same way each time: permanent, so the row goes dead at once,
 * visible on the App Home, instead of holding its channel forever.
 */
export const TRANSIENT_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'team_added_to_org', 'unknown_error']);

/**
 * Errors after which, in Slack's words, "it's possible some aspect of the
 * operation succeeded before the error was raised": a post answered with one
 * may be in the channel, so its outcome is unknown (looked up before any resend).
 */
/**
 * Errors that say the bot's token is refused, whatever the call
 * (`invalid_auth`, `not_authed`, `token_revoked`, `token_expired`,
 * `account_inactive`: the token is invalid, missing, revoked, expired, or its
 * bot or workspace deleted; `ekm_access_denied`: the workspace's
 * administrators have revoked the key everything is encrypted with). They are
 * a state of the workspace, which an operator ends (a new token and a
 * restart, the token or key re-enabled): the outbox holds every Slack row
 * until a probe says the token works, rather than making each row dead.
 * `team_access_not_granted`, `missing_scope`, `no_permission` are not here:
 * the token works, only not for that channel or method (auth.test would
 * pass, and the hold would never end), so they stay permanent for the row.
 */
export const CREDENTIAL_ERRORS = new Set(['invalid_auth', 'not_authed', 'token_revoked', 'token_expired', 'account_inactive', 'ekm_access_denied']);

export const MAYBE_APPLIED_ERRORS = new Set(['internal_error', 'fatal_error']);

const DEFAULT_RETRY_MS = 1000;

/**
 * The permanent codes the metric names; any other permanent code (Slack adds
 * new ones, a proxy may answer anything) counts as `permanent`, so the label
 * keeps a fixed set of values.
 */
const LABELLED_PERMANENT = new Set([
  'channel_not_found',
  'is_archived',
  'not_in_channel',
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'no_permission',
  'missing_scope',
  'restricted_action',
  'ekm_access_denied',
  'team_access_not_granted',
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'metadata_too_large',
  'msg_too_long',
  'no_text',
  'too_many_attachments',
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
  'thread_not_found',
]);

/**
 * The `result` label of `scheduler_slack_calls_total` for a failure: one of a
 * fixed set (a permanent error's code, `rate_limited`, `unknown`, a known
 * transient code (`TRANSIENT_ERRORS`), `platform_error`, `http_4xx`/`http_5xx`,
 * `request_failed`, `error`). The failure's `error` text is not a label: a
 * connection error carries addresses and ports and a proxy may answer any
 * code, each a new time series, without end.
 */
export function slackResultLabel(failure: SlackFailure, error: unknown): string {
  if (failure.kind === 'rate_limited' || failure.kind === 'unknown') return failure.kind;
  if (failure.kind === 'permanent' || failure.kind === 'credentials') return LABELLED_PERMANENT.has(failure.error) ? failure.error : 'permanent';
  const e = error as { code?: string; statusCode?: number };
  switch (e?.code) {
    case ErrorCode.PlatformError:
      return TRANSIENT_ERRORS.has(failure.error) ? failure.error : 'platform_error';
    case ErrorCode.HTTPError:
      return (e.statusCode ?? 500) >= 500 ? 'http_5xx' : 'http_4xx';
    case ErrorCode.RequestError:
      return 'request_failed';
    default:
      return 'error';
  }
}

export function classifySlackError(error: unknown, mutating: boolean): SlackFailure {
  const e = error as { code?: string; retryAfter?: number; data?: { error?: string }; statusCode?: number; message?: string; original?: { message?: string } };
  switch (e?.code) {
    case ErrorCode.RateLimitedError:
      // Whole seconds as Slack's client read them, at least one, and capped like every destination's (src/domain/retry-after.ts).
      return { kind: 'rate_limited', retryAfterMs: capRetryAfterMs(Math.max(1, Number.isFinite(e.retryAfter) ? e.retryAfter! : 1) * 1000), error: 'ratelimited' };
    case ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown_error';
      if (code === 'ratelimited' || code === 'rate_limited') return { kind: 'rate_limited', retryAfterMs: DEFAULT_RETRY_MS, error: code };
      if (mutating && MAYBE_APPLIED_ERRORS.has(code)) return { kind: 'unknown', error: code };
      if (CREDENTIAL_ERRORS.has(code)) return { kind: 'credentials', error: code };
      return TRANSIENT_ERRORS.has(code) ? { kind: 'transient', error: code } : { kind: 'permanent', error: code };
    }
    case ErrorCode.HTTPError:
      // A 5xx after the request reached Slack may still have been applied.
      return { kind: mutating && (e.statusCode ?? 500) >= 500 ? 'unknown' : 'transient', error: `HTTP ${e.statusCode}` };
    case ErrorCode.RequestError:
      return { kind: mutating ? 'unknown' : 'transient', error: `request failed: ${e.original?.message ?? e.message}` };
    default:
      return { kind: mutating ? 'unknown' : 'transient', error: e?.message ?? String(error) };
  }
}
