import type { Config } from '../../config/env.js';
import type { Tenant } from '../../db/schema.js';
import { decideRight, type SlackAction } from '../../domain/rights.js';
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
  const userGroups = named.length && directory ? await directory.groupsOf(input.user, named) : [];
  const decision = decideRight({ action: input.action, user: input.user, userGroups, channelMember: input.channelMember, rights, globalAdmins: config.ADMIN_USERS });
  if (decision.allowed) return undefined;
  const tenant = escapeMrkdwn(input.tenant.name);
  const who = decision.needs === 'admin' ? `${tenant}'s admins` : `${tenant}'s responders`;
  const ask = decision.ask.length
    ? `Ask ${orList(decision.ask.map((id) => (id.startsWith('S') ? groupMention(id) : userMention(id))))}.`
    : `Nobody is named for that yet: ask whoever runs the scheduler to add you to ${decision.needs === 'admin' ? '`rights.admins`' : '`rights.responders`'} of ${tenant} in the workflows file.`;
  return `Only ${who} can ${WHAT[input.action]} ${OBJECT[input.action] ?? "this tenant's alerts"}. ${ask}`;
}

function orList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
