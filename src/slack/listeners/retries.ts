import type { AnyMiddlewareArgs, App } from '@slack/bolt';
import type { Logger } from '../../log.js';

/**
 * Slack delivers a request again (X-Slack-Retry-Num, or a Socket Mode
 * envelope's retry_attempt) when it thinks the first went unanswered. Every
 * listener acks first, so a retried command, click or form submission has
 * already been received and acted on (or is being): acting again would post
 * a second silence, start a second run, reassign twice. The retry is
 * acknowledged empty (the first delivery answers on its response_url) and
 * goes no further. Events API deliveries pass: app_home_opened only publishes
 * the Home again.
 */
export function dropSlackRetries(app: App, logger: Logger): void {
  app.use(async (args) => {
    const { context, next, body } = args;
    if (context.retryNum === undefined || (body as { type?: unknown }).type === 'event_callback') return next();
    const ack = (args as AnyMiddlewareArgs & { ack?: () => Promise<void> }).ack;
    if (ack) await ack();
    logger.info({ retryNum: context.retryNum, retryReason: context.retryReason, type: (body as { type?: unknown }).type ?? 'slash_command' }, 'ignored a Slack retry of a request already received');
  });
}
