import { webApi, type AuthorizeResult } from '@slack/bolt';
import type { Logger } from '../../log.js';

/**
 * Bolt's own single-token authorization calls auth.test the moment the App is
 * built and keeps that promise for ever: if Slack is unreachable at start-up
 * the rejection is unhandled (Node ends the process) and every later request
 * fails authorization with the same stale error. This one asks lazily, keeps
 * only a success, and while Slack cannot be asked still authorizes with the
 * token alone (commands and buttons need nothing more), trying again next time.
 */
export function botAuthorization(token: string, clientOptions: webApi.WebClientOptions, logger: Logger): () => Promise<AuthorizeResult> {
  const client = new webApi.WebClient(token, clientOptions);
  let known: AuthorizeResult | undefined;
  let asking: Promise<AuthorizeResult> | undefined;
  return async () => {
    if (known) return known;
    asking ??= client.auth
      .test()
      .then((r: webApi.AuthTestResponse): AuthorizeResult => {
        const result: AuthorizeResult = { botToken: token, botId: r.bot_id, botUserId: r.user_id, teamId: r.team_id, enterpriseId: r.enterprise_id };
        known = result;
        return result;
      })
      .catch((error: unknown): AuthorizeResult => {
        logger.warn({ err: error }, 'Slack auth.test failed: authorizing with the bot token alone until it answers');
        return { botToken: token };
      })
      .finally(() => {
        asking = undefined;
      });
    return asking;
  };
}
