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

/** One rung of a page's fallback: who it names there, and what Slack says that reaches (`onCallReach`). */
export interface PageRung<S extends string = PageStep> {
  step: S;
  named: { group?: string; users?: readonly string[] };
  reach: OnCallReach;
}

/** The rungs, in order: the alert's owner, the tenant's on-call, the platform's on-call (the operator's). */
export type PageStep = 'owner' | 'tenant_oncall' | 'platform_oncall';

export type PageTarget<S extends string = PageStep> =
  | { kind: 'page'; rung: PageRung<S>; passed: PageRung<S>[] }
  /** Every rung reaches nobody: the page goes to the platform channel with no one to mention, saying so. */
  | { kind: 'nobody'; passed: PageRung<S>[] };

/**
 * Whom a page goes to when its first name reaches nobody: the next rung that
 * is not known to reach nobody (an owner deactivated: the tenant's on-call;
 * an on-call group emptied, disabled or deleted: the platform's on-call),
 * with the rungs passed over, whose notes say why (the thread is told). A
 * rung whose lookup failed is not known to reach nobody, so it is paged, not
 * passed over: Slack rate-limiting a lookup must not page the operator's
 * people for a tenant's alert. A rung naming no one is skipped silently
 * (no owner; no platform on-call configured). Pure: the reach of each rung
 * is asked of Slack by the caller, at the moment the page is sent.
 */
export function pageTarget<S extends string>(rungs: readonly PageRung<S>[]): PageTarget<S> {
  const passed: PageRung<S>[] = [];
  for (const rung of rungs) {
    const named = (rung.named.group ? 1 : 0) + (rung.named.users?.length ?? 0);
    if (named === 0) continue;
    if (!rung.reach.reachesNobody) return { kind: 'page', rung, passed };
    passed.push(rung);
  }
  return { kind: 'nobody', passed };
}
