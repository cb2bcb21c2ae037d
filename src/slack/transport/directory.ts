import { webApi } from '@slack/bolt';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import type { SlackAccount } from '../../domain/rights.js';

/**
 * Who is in a channel and who is in a user group, as Slack says, cached
 * briefly: the App Home is filtered by channel membership and rights may name
 * user groups. A lookup that fails counts as "not a member" (fail closed) and
 * is not cached, so the next look asks again.
 */
export interface SlackDirectory {
  isChannelMember(channel: string, user: string): Promise<boolean>;
  /**
   * Of `groups`, those the user belongs to (`member`), those Slack says are disabled or deleted
   * (`gone`: no_such_subteam), and those it could not be asked about just now (`unknown`: error, rate limit).
   */
  groupsOf(user: string, groups: readonly string[]): Promise<{ member: string[]; gone: string[]; unknown: string[] }>;
  /** A user group's members, or Slack's error (`no_such_subteam` for one disabled or deleted). */
  groupMembers(group: string): Promise<{ users: string[] } | { error: string }>;
  /** What Slack says of a person's account, or undefined when it could not say (error, missing `users:read`). */
  account(user: string): Promise<SlackAccount | undefined>;
}

export const DIRECTORY_TTL_MS = 60_000;

type Cached = { at: number; members: ReadonlySet<string> };
type Lookup = { members: ReadonlySet<string> } | { error: string };

export function webDirectory(client: InstanceType<typeof webApi.WebClient>, clock: Pick<Clock, 'now'>, logger: Logger, ttlMs = DIRECTORY_TTL_MS): SlackDirectory {
  const channels = new Map<string, Cached>();
  const groups = new Map<string, Cached>();

  const accounts = new Map<string, { at: number; account: SlackAccount }>();

  async function cached(cache: Map<string, Cached>, id: string, method: string, load: () => Promise<string[]>): Promise<Lookup> {
    const now = clock.now().getTime();
    const hit = cache.get(id);
    if (hit && now - hit.at < ttlMs) return { members: hit.members };
    try {
      const members = new Set(await load());
      metrics.slackCalls.inc({ method, result: 'ok' });
      cache.set(id, { at: now, members });
      return { members };
    } catch (error) {
      metrics.slackCalls.inc({ method, result: 'error' });
      logger.warn({ err: error, id, method }, 'Slack membership lookup failed: counting the user as not a member');
      return { error: slackError(error) };
    }
  }
  const has = (l: Lookup, user: string) => 'members' in l && l.members.has(user);

  const channelMembers = (channel: string) =>
    cached(channels, channel, 'conversations.members', async () => {
      const out: string[] = [];
      let cursor: string | undefined;
      do {
        const r = await client.conversations.members({ channel, limit: 1000, ...(cursor ? { cursor } : {}) });
        out.push(...(r.members ?? []));
        cursor = r.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return out;
    });
  const groupMembers = (group: string) =>
    cached(groups, group, 'usergroups.users.list', async () => (await client.usergroups.users.list({ usergroup: group })).users ?? []);

  return {
    async isChannelMember(channel, user) {
      return has(await channelMembers(channel), user);
    },
    async groupsOf(user, wanted) {
      const member: string[] = [];
      const gone: string[] = [];
      const unknown: string[] = [];
      for (const g of new Set(wanted)) {
        if (!g.startsWith('S')) continue;
        const l = await groupMembers(g);
        if ('error' in l) (l.error === 'no_such_subteam' ? gone : unknown).push(g);
        else if (l.members.has(user)) member.push(g);
      }
      return { member, gone, unknown };
    },
    async groupMembers(group) {
      const l = await groupMembers(group);
      return 'error' in l ? l : { users: [...l.members] };
    },
    async account(user) {
      const now = clock.now().getTime();
      const hit = accounts.get(user);
      if (hit && now - hit.at < ttlMs) return hit.account;
      try {
        const u = (await client.users.info({ user })).user;
        metrics.slackCalls.inc({ method: 'users.info', result: 'ok' });
        if (!u) return undefined;
        const account: SlackAccount = { deleted: u.deleted === true, bot: u.is_bot === true || u.id === 'USLACKBOT' };
        accounts.set(user, { at: now, account });
        return account;
      } catch (error) {
        metrics.slackCalls.inc({ method: 'users.info', result: 'error' });
        logger.warn({ err: error, user, method: 'users.info' }, 'Slack users.info failed: the account is not checked');
        return undefined;
      }
    },
  };
}

/** Slack's error code (`no_such_subteam`, `ratelimited`…) or the failure's message. */
function slackError(error: unknown): string {
  const data = (error as { data?: { error?: unknown } }).data;
  if (data && typeof data.error === 'string') return data.error;
  const code = (error as { code?: unknown }).code;
  return code === 'slack_webapi_rate_limited_error' ? 'ratelimited' : error instanceof Error ? error.message : String(error);
}
