import { webApi, type AuthorizeResult } from '@slack/bolt';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';

export interface BotAuthorizationOptions {
  /**
   * How long one auth.test may take. Bolt authorizes before any listener
   * runs, so a request waits this long at most before its listener can ack
   * (Slack's deadline is 3 seconds). Default 1 second.
   */
  timeoutMs?: number;
  /** After a failed or timed-out ask, requests use the token alone for this long (clock time) before Slack is asked again. Default 30 seconds. */
  retryAfterMs?: number;
}

/**
 * Bolt's own single-token authorization calls auth.test the moment the App is
 * built and keeps that promise for ever: if Slack is unreachable at start-up
 * the rejection is unhandled (Node ends the process) and every later request
 * fails authorization with the same stale error. This one asks lazily, keeps
 * only a success, and while Slack cannot be asked still authorizes with the
 * token alone (commands and buttons need nothing more).
 *
 * The ask is bounded (`timeoutMs`, no retries of the client's own): Slack
 * hanging on it must not hold the requests waiting behind it past the ack
 * deadline. A failure or timeout is not kept: Slack is asked again once
 * `retryAfterMs` has passed, and meanwhile requests go ahead at once
 * instead of each paying for another ask.
 */
export function botAuthorization(
  token: string,
  clientOptions: webApi.WebClientOptions,
  logger: Logger,
  clock: Clock,
  options: BotAuthorizationOptions = {},
): () => Promise<AuthorizeResult> {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;
  const client = new webApi.WebClient(token, { ...clientOptions, timeout: timeoutMs, retryConfig: { retries: 0 } });
  const tokenAlone: AuthorizeResult = { botToken: token };
  let known: AuthorizeResult | undefined;
  let asking: Promise<AuthorizeResult> | undefined;
  let askAgainAt = 0;
  return async () => {
    if (known) return known;
    if (asking) return asking;
    if (clock.now().getTime() < askAgainAt) return tokenAlone;
    asking = client.auth
      .test()
      .then((r: webApi.AuthTestResponse): AuthorizeResult => {
        known = { botToken: token, botId: r.bot_id, botUserId: r.user_id, teamId: r.team_id, enterpriseId: r.enterprise_id };
        return known;
      })
      .catch((error: unknown): AuthorizeResult => {
        askAgainAt = clock.now().getTime() + retryAfterMs;
        logger.warn({ err: error, retryAfterMs }, 'Slack auth.test failed or timed out: authorizing with the bot token alone, asking again later');
        return tokenAlone;
      })
      .finally(() => {
        asking = undefined;
      });
    return asking;
  };
}
