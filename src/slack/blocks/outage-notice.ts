import { compactDuration } from '../../domain/durations.js';
import { refusalAdvice, shownDestination, type Outage } from '../../domain/destination-outage.js';
import { LIMITS, mrkdwn, safeText, truncate } from './limits.js';
import type { SlackMessage } from './types.js';

/**
 * The platform channel's notice that a destination has been failing or
 * refusing the bot's credentials (or has recovered). The destination is its stored name (`slack:C0123`,
 * `webhook:ops-hook`), never a URL or secret; the last error is escaped text.
 */
export function renderOutageNotice(n: { kind: 'outage' | 'recovered' | 'refused' | 'dead'; destination: string; outage: Outage; now: Date }): SlackMessage {
  // At least a minute: a notice that fires at once still reads as an outage, not "0s".
  const minutes = compactDuration(Math.max(60_000, Math.round((n.now.getTime() - n.outage.failingSince.getTime()) / 60_000) * 60_000));
  const dest = safeText(shownDestination(n.destination), 200);
  const refused = n.outage.cause === 'credentials';
  const text = {
    outage: () =>
      refused
        ? `${dest} refuses the bot's credentials (${safeText(n.outage.lastError, 300)}). Its notifications are held, none is dropped, and they go out in order once the credentials work again (a new token or secret and a restart, or the old one re-enabled).`
        : `Deliveries to ${dest} have been failing for ${minutes} (${n.outage.failures} attempts, last error: ${safeText(n.outage.lastError, 300)}). Its notifications are held and will go out in order when it recovers.`,
    recovered: () =>
      refused
        ? `${dest} accepts the bot's credentials again after ${minutes} of refusing them; the notifications held meanwhile are going out in order.`
        : `Deliveries to ${dest} recovered after ${minutes}; the notifications held meanwhile are going out in order.`,
    refused: () =>
      `Deliveries to ${dest} are no longer failing after ${minutes}, but not recovered: it answered, and refused for good (${safeText(n.outage.lastError, 300)}). That notification is dead; the ones held meanwhile are tried now and go dead too if it keeps refusing (see the App Home).`,
    dead: () => {
      const advice = refusalAdvice(n.destination, n.outage.lastError);
      const count = n.outage.failures === 1 ? 'A notification' : `${n.outage.failures} notifications (since ${minutes} ago)`;
      return `${dest} refuses notifications for good (${safeText(n.outage.lastError, 300)}). ${count} went dead there, not delivered; the App Home lists them.${advice ? ` ${advice}` : ''} Told again in a day if it keeps refusing.`;
    },
  }[n.kind]();
  const icon = { outage: ':warning:', recovered: ':white_check_mark:', refused: ':no_entry:', dead: ':no_entry:' }[n.kind];
  return { text: truncate(text, LIMITS.fallbackText), blocks: [{ type: 'section', text: mrkdwn(`${icon} ${text}`) }] };
}
