import { onCallReach } from '../../domain/oncall-reach.js';
import type { SlackAccount } from '../../domain/rights.js';
import { LIMITS, mrkdwn } from '../blocks/limits.js';
import { onCallNoteText } from '../blocks/oncall-notes.js';
import type { SlackMessage } from '../blocks/types.js';
import type { SlackDirectory } from './directory.js';

/**
 * A page whose every name reaches nobody (an empty, disabled or deleted
 * group, deactivated or bot users: src/domain/oncall-reach.ts) is posted all
 * the same, with a line under it saying nobody was notified and why, so the
 * people reading the channel know the alert is theirs to take. Asked of
 * Slack through the directory's cache; a lookup that fails adds nothing (it
 * is not known to reach nobody). `mention` is the event's `data.mention`.
 */
export async function withPageReach(directory: SlackDirectory | undefined, mention: unknown, message: SlackMessage): Promise<SlackMessage> {
  const named = mentionOf(mention);
  if (!directory || !named || named.groups.length > 1 || named.groups.length + named.users.length === 0) return message;
  const group = named.groups[0];
  const accounts = new Map<string, SlackAccount | undefined>();
  for (const u of named.users) accounts.set(u, await directory.account(u));
  const reach = onCallReach({ ...(group ? { group } : {}), users: named.users }, group ? await directory.groupMembers(group) : undefined, accounts);
  if (!reach.reachesNobody) return message;
  const why = reach.notes.map(onCallNoteText).join('; ');
  const line = `:warning: Nobody was notified: ${why}. Take the alert here; \`/scheduler oncall\` shows who escalations reach.`;
  const blocks = message.blocks.length < LIMITS.messageBlocks ? [...message.blocks, { type: 'context' as const, elements: [mrkdwn(line, LIMITS.contextElementText)] }] : message.blocks;
  return { ...message, text: `${message.text}\n${line}`.slice(0, LIMITS.fallbackText), blocks };
}

/** Whom an event notifies by name: a page's `mention`, or the owner a reminder is for. */
export function notifiedBy(event: { kind: string; data: unknown }, pages: boolean): unknown {
  const data = (event.data ?? {}) as { mention?: unknown; ownerUser?: unknown };
  if (pages) return data.mention;
  return event.kind === 'reminder' && typeof data.ownerUser === 'string' ? { users: [data.ownerUser] } : undefined;
}

function mentionOf(value: unknown): { users: string[]; groups: string[] } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const m = value as { users?: unknown; groups?: unknown };
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { users: ids(m.users), groups: ids(m.groups) };
}
