import { metrics } from '../../../metrics.js';
import { loadAlertCard } from '../../views/alert-card-loader.js';
import { renderAlertRoot } from '../../blocks/alert-card.js';
import { renderedOutOfBand } from '../../transport/alert-threads.js';
import type { SlackContext } from '../context.js';

/**
 * The answer to a form opened from a root's button: that root, re-rendered
 * from the state just committed (chat.update: a submission has no
 * response_url). Best effort: should it fail, the root refresher re-renders
 * the root from the same state shortly; should the refresher have shown a
 * newer state before it landed, it renders that one again.
 */
export async function updateClickedRoot(ctx: SlackContext, client: { chat: { update: (args: never) => Promise<unknown> } }, at: { alertId: number; channel: string; ts: string }): Promise<void> {
  const loaded = await loadAlertCard(ctx.deps.db, ctx.deps.launchers, at.alertId);
  if (!loaded) return;
  try {
    await client.chat.update({ channel: at.channel, ts: at.ts, ...renderAlertRoot(loaded.card, ctx.deps.clock.now()) } as never);
    metrics.slackCalls.inc({ method: 'chat.update', result: 'ok' });
    await renderedOutOfBand(ctx.deps.db, { alertId: at.alertId, channel: at.channel, rootTs: at.ts, eventId: loaded.eventId });
  } catch (error) {
    metrics.slackCalls.inc({ method: 'chat.update', result: 'error' });
    ctx.deps.logger.warn({ alertId: at.alertId, channel: at.channel, error: String(error) }, 'could not update the clicked root at once; the refresher will');
  }
}
