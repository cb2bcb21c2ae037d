/**
 * Who may do what to a tenant's alerts in Slack: decided here, once, for
 * every button, modal and slash command (DESIGN.md, trust model).
 *
 * Two roles per tenant, named in the workflows file (`rights`) by Slack user
 * ids (U…/W…) and user-group ids (S…):
 * - responders (default: every member of the tenant's channel, and of the
 *   platform channel) take, release their own ownership, silence up to 24
 *   hours, unsilence and run now;
 * - admins (the tenant's `rights.admins` plus ADMIN_USERS, who administer
 *   every tenant) also release someone else's ownership, reassign, resolve by
 *   hand, silence for longer than 24 hours (or until resolved), pause and
 *   resume workflows and set maintenance windows.
 * When neither the tenant nor ADMIN_USERS names an admin, responders hold the
 * admin rights too: there would be nobody to ask.
 */

export const SLACK_ACTIONS = [
  'take',
  'release_own',
  'release_other',
  'reassign',
  'silence',
  'silence_long',
  'unsilence',
  'resolve',
  'run_now',
  'pause',
  'maintenance',
] as const;
export type SlackAction = (typeof SLACK_ACTIONS)[number];

export const ADMIN_ACTIONS: readonly SlackAction[] = ['release_other', 'reassign', 'resolve', 'silence_long', 'pause', 'maintenance'];

/** A silence longer than this (or until resolved) is an admin action. */
export const LONG_SILENCE_MS = 24 * 3_600_000;

export interface TenantRights {
  responders?: readonly string[];
  admins?: readonly string[];
}

export interface RightsRequest {
  action: SlackAction;
  user: string;
  /** The user groups (S…) the user belongs to, as far as the caller resolved them (those named in the rights suffice). */
  userGroups: readonly string[];
  /** The user is a member of the tenant's channel or of the platform channel (clicking there proves it). */
  channelMember: boolean;
  rights: TenantRights;
  /** ADMIN_USERS: admins of every tenant. */
  globalAdmins: readonly string[];
}

export type RightsDecision =
  | { allowed: true; as: 'admin' | 'responder' }
  /** `ask`: the user and group ids to name in the refusal (admins for an admin action, else responders and admins). */
  | { allowed: false; needs: 'admin' | 'responder'; ask: string[] };

const listed = (list: readonly string[] | undefined, user: string, groups: readonly string[]) =>
  (list ?? []).some((id) => id === user || groups.includes(id));

export function decideRight(r: RightsRequest): RightsDecision {
  const tenantAdmins = r.rights.admins ?? [];
  const admins = [...new Set([...tenantAdmins, ...r.globalAdmins])];
  const isAdmin = listed(admins, r.user, r.userGroups);
  const responderList = r.rights.responders;
  const isResponder = isAdmin || (responderList && responderList.length > 0 ? listed(responderList, r.user, r.userGroups) : r.channelMember);
  const noAdminsNamed = admins.length === 0;

  if (isAdmin) return { allowed: true, as: 'admin' };
  if (ADMIN_ACTIONS.includes(r.action)) {
    if (noAdminsNamed && isResponder) return { allowed: true, as: 'responder' };
    return { allowed: false, needs: 'admin', ask: admins };
  }
  if (isResponder) return { allowed: true, as: 'responder' };
  return { allowed: false, needs: 'responder', ask: [...new Set([...(responderList ?? []), ...admins])] };
}

/**
 * Whether an alert may be handed to a person (Reassign… or `/scheduler
 * reassign` naming them): only to someone who could take it themselves, a
 * responder of the tenant by its rights or, without a list, a member of its
 * channel or of the platform channel. Anyone else (another tenant's people,
 * someone who left the channel) would own an alert whose thread they cannot
 * see: it would stop escalating with nobody able to act, and their reminders
 * would mention someone Slack does not notify there.
 */
export function mayBeAssigned(r: Omit<RightsRequest, 'action'>): boolean {
  return decideRight({ ...r, action: 'take' }).allowed;
}

/** What Slack says of a person's account (`users.info`): deactivated, or a bot or app user. */
export interface SlackAccount {
  deleted: boolean;
  bot: boolean;
}

/**
 * Why an account cannot be handed an alert, even when Slack still lists it
 * in the channel: a deactivated person is notified of nothing and answers no
 * reminder, and a bot (the scheduler itself among them) cannot act; either
 * would stop the alert escalating with nobody on it. Undefined: fit, or
 * Slack could not say (the channel and rights checks still hold).
 */
export function unfitAccount(account: SlackAccount | undefined): 'deactivated' | 'bot' | undefined {
  if (account?.deleted) return 'deactivated';
  if (account?.bot) return 'bot';
  return undefined;
}

/** The silence action a duration needs: `until` null means until resolved. */
export function silenceAction(durationMs: number | null): SlackAction {
  return durationMs === null || durationMs > LONG_SILENCE_MS ? 'silence_long' : 'silence';
}

export interface TenantVisibility {
  id: string;
  channel: string | null;
  rights: TenantRights;
}

/**
 * Whether a person's App Home shows alerts in shadow (docs/policies.md): only
 * to those who see the audit destination, members of the platform channel,
 * and global admins. A tenant's own people are told nothing of a shadow
 * alert, on their Home either.
 */
export function seesShadowAlerts(viewer: { user: string; platformMember: boolean }, globalAdmins: readonly string[]): boolean {
  return viewer.platformMember || globalAdmins.includes(viewer.user);
}

/**
 * The tenants whose alerts a person may see on the App Home: those whose
 * channel they are in, those they administer, and every tenant for global
 * admins and members of the platform channel (which sees everything anyway).
 */
export function visibleTenants(
  tenants: readonly TenantVisibility[],
  viewer: { user: string; userGroups: readonly string[]; channels: ReadonlySet<string>; platformMember: boolean },
  globalAdmins: readonly string[],
): string[] {
  if (viewer.platformMember || globalAdmins.includes(viewer.user)) return tenants.map((t) => t.id);
  return tenants
    .filter((t) => (t.channel !== null && viewer.channels.has(t.channel)) || listed(t.rights.admins, viewer.user, viewer.userGroups))
    .map((t) => t.id);
}
