import { unfitAccount, type SlackAccount } from './rights.js';

/**
 * Whom a tenant's on-call page reaches, from what Slack says of the people
 * it names: a user group that is empty, or disabled or deleted (Slack answers
 * `no_such_subteam`), and users whose account is deactivated or a bot, page
 * nobody though their mention is posted. `/scheduler oncall` tells the
 * operator so, instead of letting an escalation page nobody in silence.
 */
export type GroupLookup = { users: readonly string[] } | { error: string };

export type OnCallNote =
  | { kind: 'group_empty'; group: string }
  | { kind: 'group_gone'; group: string }
  | { kind: 'group_unchecked'; group: string; error: string }
  | { kind: 'user_unfit'; user: string; why: 'deactivated' | 'bot' };

export interface OnCallReach {
  notes: OnCallNote[];
  /** Everyone named is known to reach nobody (a lookup that failed is not known). */
  reachesNobody: boolean;
}

export function onCallReach(oncall: { group?: string; users?: readonly string[] }, group: GroupLookup | undefined, accounts: ReadonlyMap<string, SlackAccount | undefined>): OnCallReach {
  const notes: OnCallNote[] = [];
  let reached = 0;
  let unknown = 0;
  if (oncall.group && group) {
    if ('users' in group) {
      if (group.users.length === 0) notes.push({ kind: 'group_empty', group: oncall.group });
      else reached++;
    } else if (group.error === 'no_such_subteam') notes.push({ kind: 'group_gone', group: oncall.group });
    else {
      notes.push({ kind: 'group_unchecked', group: oncall.group, error: group.error });
      unknown++;
    }
  } else if (oncall.group) unknown++;
  for (const user of oncall.users ?? []) {
    const why = unfitAccount(accounts.get(user));
    if (why) notes.push({ kind: 'user_unfit', user, why });
    else reached++;
  }
  const named = (oncall.group ? 1 : 0) + (oncall.users?.length ?? 0);
  return { notes, reachesNobody: named > 0 && reached === 0 && unknown === 0 };
}
