import type { PageRung, PageStep, PageTarget } from './oncall-reach.js';

/**
 * What a page says once its target is chosen (`pageTarget`), in the channel
 * it is posted in. The rungs a page climbs are named here too: the names it
 * was made with (the owner, else the tenant's on-call: `escalationMention`),
 * the tenant's on-call, the platform's on-call (PLATFORM_ONCALL). Pure: the
 * Slack transport asks the reach of each rung and posts what this decides.
 */
export interface Named {
  group?: string;
  users?: readonly string[];
}
export interface Mention {
  users: string[];
  groups: string[];
}

/**
 * The rungs in order, by name. A page naming exactly the tenant's on-call
 * starts there; one naming anyone else names its owner (a reminder's, an
 * owned alert's escalation), and the tenant's on-call comes next.
 */
export function pageLadder(page: Mention, tenantOnCall: Named, platformOnCall: Named | undefined): { step: PageStep; named: Named }[] {
  const first: Named = { ...(page.groups[0] ? { group: page.groups[0] } : {}), users: page.users };
  const tenant: Named = { ...(tenantOnCall.group ? { group: tenantOnCall.group } : {}), users: [...(tenantOnCall.users ?? [])] };
  const platform = { step: 'platform_oncall' as const, named: platformOnCall ?? {} };
  if (sameNames(first, tenant)) return [{ step: 'tenant_oncall', named: first }, platform];
  return [{ step: 'owner', named: first }, { step: 'tenant_oncall', named: tenant }, platform];
}

/** Who reads the page: the tenant's channel, or the platform channel (the operator's, where the platform's on-call is paged). */
export type PageAudience = 'tenant' | 'platform';

export type PagePlan =
  /** The first rung is paged: the page as it was made. */
  | { kind: 'as_made' }
  /** A later rung is paged, by name here: `mention` replaces the page's names, and the thread is told why (`passed`). */
  | { kind: 'fell_back'; to: PageStep; mention: Mention; passed: PageRung[] }
  /** The tenant's channel, when the platform's on-call is paged: no names (tenants never see who), and why. */
  | { kind: 'platform_paged'; passed: PageRung[] }
  /**
   * Every rung reaches nobody: posted as made, with a warning naming why. The
   * platform channel names every rung (`noPlatformOnCall`: none is set); the
   * tenant's channel only its own.
   */
  | { kind: 'nobody'; passed: PageRung[]; noPlatformOnCall: boolean };

export function pagePlan(target: PageTarget, ladder: readonly { step: PageStep; named: Named }[], audience: PageAudience): PagePlan {
  if (target.kind === 'nobody') {
    const platformNamed = ladder.some((r) => r.step === 'platform_oncall' && count(r.named) > 0);
    if (audience === 'platform') return { kind: 'nobody', passed: target.passed, noPlatformOnCall: !platformNamed };
    return { kind: 'nobody', passed: target.passed.filter((r) => r.step !== 'platform_oncall'), noPlatformOnCall: false };
  }
  if (target.passed.length === 0) return { kind: 'as_made' };
  if (target.rung.step === 'platform_oncall' && audience === 'tenant') return { kind: 'platform_paged', passed: target.passed };
  const named = target.rung.named;
  return { kind: 'fell_back', to: target.rung.step, mention: { users: [...(named.users ?? [])], groups: named.group ? [named.group] : [] }, passed: target.passed };
}

/**
 * Whom a page names where Slack's answer is not known (email, the webhook,
 * PagerDuty). Slack picks the rung at send time from its directory
 * (`pageTarget`, `pagePlan`), and it may pass over the names the page was
 * made with; so elsewhere the page names the rung it starts at by role (the
 * alert's owner, or the tenant's on-call: `pageLadder`'s first step), never a
 * person Slack may pass over, and says that Slack's thread tells who is paged
 * instead. Undefined for a page naming nobody.
 */
export function offSlackPage(page: Mention, tenantOnCall: Named): { startsAt: 'owner' | 'tenant_oncall' } | undefined {
  if (page.users.length + page.groups.length === 0) return undefined;
  return { startsAt: pageLadder(page, tenantOnCall, undefined)[0]!.step === 'owner' ? 'owner' : 'tenant_oncall' };
}

function count(n: Named): number {
  return (n.group ? 1 : 0) + (n.users?.length ?? 0);
}

function sameNames(a: Named, b: Named): boolean {
  const users = (n: Named) => [...new Set(n.users ?? [])].sort().join(',');
  return count(b) > 0 && a.group === b.group && users(a) === users(b);
}
