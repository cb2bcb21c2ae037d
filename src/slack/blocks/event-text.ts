import { compactDuration, utcText, zoneText } from '../../domain/durations.js';
import type { EventIcon, EventText, TextPart } from '../../notify/event-text.js';
import { groupMention, slackDate, slackDateIn, userMention } from './format.js';
import { codeSpan, escapeMrkdwn } from './limits.js';

/** Slack's rendering of the one event text (src/notify/event-text.ts): mrkdwn, mentions and local times. */

export const EVENT_EMOJI: Record<EventIcon, string> = {
  warning: ':warning:',
  critical: ':rotating_light:',
  new_error: ':twisted_rightwards_arrows:',
  take: ':raising_hand:',
  release: ':wave:',
  reassign: ':arrow_right:',
  reminder: ':alarm_clock:',
  expired: ':hourglass:',
  silenced: ':mute:',
  unsilenced: ':loud_sound:',
  run: ':arrow_forward:',
  succeeded: ':white_check_mark:',
  failed: ':x:',
  flapping: ':arrows_counterclockwise:',
  resolved: ':white_check_mark:',
  maintenance: ':construction:',
  paused: ':double_vertical_bar:',
  resumed: ':arrow_forward:',
  info: ':information_source:',
};

/** A person or group as Slack mentions them, or, `quiet`, named as text that notifies nobody. */
function personMrkdwn(p: Extract<TextPart, { type: 'user' | 'group' }>): string {
  if (p.quiet) return `@${escapeMrkdwn(p.id)}`;
  return p.type === 'user' ? userMention(p.id) : groupMention(p.id);
}

function mrkdwnPart(p: TextPart): string {
  switch (p.type) {
    case 'text':
      return escapeMrkdwn(p.text);
    case 'strong':
      // Asterisks inside would end the bold early; the name is still readable without them.
      return `*${escapeMrkdwn(p.text.replace(/\*/g, '∗').replace(/\s+/g, ' '))}*`;
    case 'code':
      return codeSpan(p.text);
    case 'user':
    case 'group':
      return personMrkdwn(p);
    case 'time':
      // zoneText names only a zone Intl knows (UTC otherwise): nothing in it to escape.
      if (p.zone) return slackDateIn(p.at, p.zone);
      if (!p.relative) return slackDate(p.at);
      return p.lead === 'relative' ? `${escapeMrkdwn(p.relative)} (at ${slackDate(p.at)})` : `${slackDate(p.at)} (${escapeMrkdwn(p.relative)})`;
    case 'duration':
      return compactDuration(p.ms);
  }
}

/** The sentence as mrkdwn, with its emoji, and the note as a quote. */
export function eventMrkdwn(text: EventText): string {
  const line = `${EVENT_EMOJI[text.icon]} ${text.parts.map(mrkdwnPart).join('')}`;
  return text.quote ? `${line}\n> ${escapeMrkdwn(text.quote).replace(/\n/g, '\n> ')}` : line;
}

/**
 * The notification text: plain language that names tenant and workflow, no
 * mrkdwn and no date tokens. Mentions stay (`<@U…>`): Slack shows them as
 * names in notifications. Untrusted text is escaped, since Slack parses this too.
 */
export function eventFallback(text: EventText, where: { tenant: string; workflow: string }): string {
  const plainPart = (p: TextPart): string => {
    switch (p.type) {
      case 'user':
      case 'group':
        return personMrkdwn(p);
      case 'time':
        return escapeMrkdwn(p.zone ? zoneText(p.at, p.zone) : p.relative && p.lead === 'relative' ? p.relative : utcText(p.at));
      case 'duration':
        return compactDuration(p.ms);
      default:
        return escapeMrkdwn(p.text.replace(/\s+/g, ' '));
    }
  };
  const body = text.parts.map(plainPart).join('');
  const note = text.quote ? ` Note: ${escapeMrkdwn(text.quote.replace(/\s+/g, ' '))}` : '';
  return `${escapeMrkdwn(where.tenant)} / ${escapeMrkdwn(where.workflow)}: ${body}${note}`;
}
