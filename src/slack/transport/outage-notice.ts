import { WORKSPACE_SCOPE } from '../../domain/destination-outage.js';
import type { OutageNotice } from '../../notify/sender.js';
import { renderOutageNotice } from '../blocks/outage-notice.js';
import { alertMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';

/**
 * Posts a long outage (and its end) to the platform channel, unless the
 * platform channel is the destination that is failing, or the bot token is
 * what Slack refuses (`slack:*`: the notice would go over the same dead
 * token): then the log line and the metric are all there is, as they are
 * when no platform channel is set. The end of a refused token is posted: by
 * then the token works.
 */
export function platformOutageNotice(api: SlackOutboxApi, platformChannel: string | undefined): ((notice: OutageNotice) => Promise<void>) | undefined {
  if (!platformChannel) return undefined;
  return async (notice) => {
    if (notice.destination === `slack:${platformChannel}`) return;
    if (notice.destination === WORKSPACE_SCOPE.slack && notice.kind === 'outage') return;
    const message = renderOutageNotice(notice);
    // A refusal is told again each day while it lasts: its notices differ by when.
    const key = `outage:${notice.destination}:${(notice.kind === 'dead' ? notice.now : notice.outage.failingSince).toISOString()}:${notice.kind}`;
    const r = await api.postMessage({
      channel: platformChannel,
      ...message,
      metadata: alertMetadata({ alertId: 0, tenant: 'platform', workflow: '', event: `destination_${notice.kind}`, severity: 'warning', key }),
    });
    if (!r.ok) throw new Error(`platform channel answered ${r.error}`);
  };
}
