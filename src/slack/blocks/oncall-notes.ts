import type { OnCallNote } from '../../domain/oncall-reach.js';
import { groupMention, userMention } from './format.js';
import { escapeMrkdwn } from './limits.js';

/** What Slack said of one on-call name that reaches nobody (or could not be asked about), in words. */
export function onCallNoteText(n: OnCallNote): string {
  switch (n.kind) {
    case 'group_empty':
      return `${groupMention(n.group)} has no members`;
    case 'group_gone':
      return `${groupMention(n.group)} is disabled or deleted in Slack`;
    case 'group_unchecked':
      return `Slack could not be asked about ${groupMention(n.group)} just now (${escapeMrkdwn(n.error)})`;
    case 'user_unfit':
      return `${userMention(n.user)} is ${n.why === 'bot' ? 'a bot, not a person' : 'deactivated'}`;
  }
}
