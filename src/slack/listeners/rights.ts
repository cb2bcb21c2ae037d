import type { Config } from '../../config/env.js';
import type { Tenant } from '../../db/schema.js';
import { decideRight, mayBeAssigned, unfitAccount, type SlackAction } from '../../domain/rights.js';
import { groupMention, userMention } from '../blocks/format.js';
import { escapeMrkdwn } from '../blocks/limits.js';
import type { SlackDirectory } from '../transport/directory.js';

const WHAT: Record<SlackAction, string> = {
  take: 'take ownership of',
  release_own: 'release',
  release_other: "release someone else's ownership of",
  reassign: 'reassign',
  silence: 'silence',
  silence_long: 'silence for longer than 24 hours',
  unsilence: 'unsilence',
  resolve: 'resolve by hand',
  run_now: 'start runs for',
  pause: 'pause or resume',
  maintenance: 'set maintenance windows for',
};

/** What the action acts on, in a refusal. */
const OBJECT: Partial<Record<SlackAction, string>> = { pause: "this tenant's workflows", maintenance: "this tenant's workflows" };

/**
 * The edge of src/domain/rights.ts: resolves the user groups the tenant's
 * rights name, asks the one rule, and words a refusal that names whom to ask.
 * `channelMember`: the request came from the tenant's channel or the platform
 * channel, where Slack only shows it to people in that channel.
 * Undefined means allowed.
 */
export async function refusalFor(
  input: { action: SlackAction; user: string; tenant: Pick<Tenant, 'name' | 'rights'>; channelMember: boolean },
  config: Pick<Config, 'ADMIN_USERS'>,
  directory: SlackDirectory | undefined,
): Promise<string | undefined> {
  const rights = input.tenant.rights ?? {};
  const named = [...(rights.responders ?? []), ...(rights.admins ?? [])].filter((id) => id.startsWith('S'));
  const groups = named.length && directory ? await directory.groupsOf(input.user, named) : { member: [], gone: [], unknown: [] };
  const decision = decideRight({ action: input.action, user: input.user, userGroups: groups.member, channelMember: input.channelMember, rights, globalAdmins: config.ADMIN_USERS });
  if (decision.allowed) return undefined;
  const unchecked = groups.unknown.filter((g) => decision.ask.includes(g));
  if (unchecked.length) return uncheckedGroups(unchecked, input.action);
  const tenant = escapeMrkdwn(input.tenant.name);
  const who = decision.needs === 'admin' ? `${tenant}'s admins` : `${tenant}'s responders`;
  // A group Slack says is disabled or deleted holds nobody: not one to ask, and the operator should know.
  const gone = groups.gone.filter((g) => decision.ask.includes(g));
  const askable = decision.ask.filter((id) => !gone.includes(id));
  const goneNote = gone.length ? ` (${orList(gone.map(groupMention))}, named in its \`rights\`, ${gone.length === 1 ? 'is' : 'are'} disabled or deleted in Slack.)` : '';
  const ask = askable.length
    ? `Ask ${orList(askable.map((id) => (id.startsWith('S') ? groupMention(id) : userMention(id))))}.`
    : `Nobody ${gone.length ? 'else ' : ''}is named for that yet: ask whoever runs the scheduler to add you to ${decision.needs === 'admin' ? '`rights.admins`' : '`rights.responders`'} of ${tenant} in the workflows file.`;
  return `Only ${who} can ${WHAT[input.action]} ${OBJECT[input.action] ?? "this tenant's alerts"}.${goneNote} ${ask}`;
}

/**
 * The edge of `mayBeAssigned`: is the person an alert is being handed to one
 * who can see and act on it? Membership of the tenant's channel and of the
 * platform channel comes from Slack (cached briefly); a failed lookup counts
 * as not a member, and the refusal says what to do. Without Slack (no
 * directory) nothing can be checked and nothing is refused. Undefined means allowed.
 */
export async function assigneeRefusal(
  input: { assignee: string; tenant: Pick<Tenant, 'name' | 'rights' | 'channel'> },
  config: Pick<Config, 'ADMIN_USERS' | 'PLATFORM_CHANNEL'>,
  directory: SlackDirectory | undefined,
): Promise<string | undefined> {
  if (!directory) return undefined;
  const { assignee, tenant } = input;
  const unfit = unfitAccount(await directory.account(assignee));
  if (unfit === 'deactivated') return `${userMention(assignee)} can't be handed this alert: their Slack account is deactivated, so nobody would be told of it or answer its reminders. Pick someone who is here.`;
  if (unfit === 'bot') return `${userMention(assignee)} can't be handed this alert: that is a bot or app, not a person who can act on it. Pick a person.`;
  const rights = tenant.rights ?? {};
  const named = [...(rights.responders ?? []), ...(rights.admins ?? [])].filter((id) => id.startsWith('S'));
  const userGroups = named.length ? (await directory.groupsOf(assignee, named)).member : [];
  const channels = [tenant.channel, config.PLATFORM_CHANNEL].filter((c): c is string => !!c);
  let channelMember = false;
  for (const c of channels) if (!channelMember) channelMember = await directory.isChannelMember(c, assignee);
  if (mayBeAssigned({ user: assignee, userGroups, channelMember, rights, globalAdmins: config.ADMIN_USERS })) return undefined;
  const where = tenant.channel ? `<#${tenant.channel}>` : "the tenant's channel";
  return `${userMention(assignee)} can't be handed this alert: they are not in ${where} and not among ${escapeMrkdwn(tenant.name)}'s responders, so they could not see its thread or act on it. Invite them to the channel first, or pick someone who is there.`;
}

/** A refusal that may only be Slack's silence: a user group the rights name could not be looked up, so membership of it was not counted. */
function uncheckedGroups(groups: string[], action: SlackAction): string {
  return `I couldn't check with Slack just now whether you are in ${orList(groups.map(groupMention))}, so I can't let you ${WHAT[action]} ${OBJECT[action] ?? "this tenant's alerts"} yet (nothing changed). Try again in a minute; if it keeps failing, ask whoever runs the scheduler to check its \`usergroups:read\` scope.`;
}

function orList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
