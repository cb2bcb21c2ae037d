import { webApi } from '@slack/bolt';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';

/**
 * Who is in a channel and who is in a user group, as Slack says, cached
 * briefly: the App Home is filtered by channel membership and rights may name
 * user groups. A lookup that fails counts as "not a member" (fail closed) and
 * is not cached, so the next look asks again.
 */
export interface SlackDirectory {
  isChannelMember(channel: string, user: string): Promise<boolean>;
  /** Of `groups`, those the user belongs to. */
  groupsOf(user: string, groups: readonly string[]): Promise<string[]>;
}

export const DIRECTORY_TTL_MS = 60_000;

type Cached = { at: number; members: ReadonlySet<string> };

export function webDirectory(client: InstanceType<typeof webApi.WebClient>, clock: Pick<Clock, 'now'>, logger: Logger, ttlMs = DIRECTORY_TTL_MS): SlackDirectory {
  const channels = new Map<string, Cached>();
  const groups = new Map<string, Cached>();

  async function cached(cache: Map<string, Cached>, id: string, method: string, load: () => Promise<string[]>): Promise<ReadonlySet<string>> {
    const now = clock.now().getTime();
    const hit = cache.get(id);
    if (hit && now - hit.at < ttlMs) return hit.members;
    try {
      const members = new Set(await load());
      metrics.slackCalls.inc({ method, result: 'ok' });
      cache.set(id, { at: now, members });
      return members;
    } catch (error) {
      metrics.slackCalls.inc({ method, result: 'error' });
      logger.warn({ err: error, id, method }, 'Slack membership lookup failed: counting the user as not a member');
      return new Set();
    }
  }

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
      return (await channelMembers(channel)).has(user);
    },
    async groupsOf(user, wanted) {
      const out: string[] = [];
      for (const g of new Set(wanted)) if (g.startsWith('S') && (await groupMembers(g)).has(user)) out.push(g);
      return out;
    },
  };
}
