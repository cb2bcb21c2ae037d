import { describe, expect, it } from 'vitest';
import type { SlackAccount } from '../../src/domain/rights.js';
import type { SlackDirectory } from '../../src/slack/transport/directory.js';
import { pagedMessage } from '../../src/slack/transport/page-reach.js';

/** What Slack says of the workspace's people, as the directory answers it (its HTTP side is tested in people-edges). */
function directory(groups: Record<string, string[] | { error: string }>, accounts: Record<string, SlackAccount | undefined>): SlackDirectory {
  return {
    isChannelMember: async () => true,
    groupsOf: async () => ({ member: [], gone: [], unknown: [] }),
    groupMembers: async (g) => {
      const v = groups[g];
      return Array.isArray(v) ? { users: v } : (v ?? { error: 'no_such_subteam' });
    },
    account: async (u) => accounts[u],
  };
}
const message = { text: 'Escalated', blocks: [] };
const warned = async (dir: SlackDirectory, event: { kind: string; data: unknown }, pages: boolean) =>
  (await pagedMessage(dir, undefined, { event, tenant: { oncall: {} }, channel: 'CACME', pages }, () => message)).message.text.split('\n')[1];

describe('a notification that reaches nobody says so', () => {
  it('a reminder to an owner whose account is deactivated, a page to a bot', async () => {
    const dir = directory({}, { U0GONE: { deleted: true, bot: false }, U0BOT: { deleted: false, bot: true }, U0ALICE: { deleted: false, bot: false } });
    expect(await warned(dir, { kind: 'reminder', data: { ownerUser: 'U0GONE' } }, false)).toBe(':warning: Nobody was notified: <@U0GONE> is deactivated. Take the alert here; `/scheduler oncall` shows who escalations reach.');
    expect(await warned(dir, { kind: 'escalated', data: { mention: { users: ['U0BOT'], groups: [] } } }, true)).toContain('<@U0BOT> is a bot, not a person');
    expect(await warned(dir, { kind: 'reminder', data: { ownerUser: 'U0ALICE' } }, false)).toBeUndefined();
  });

  it('adds nothing when anyone named is reached, when Slack could not be asked, or for an event that names nobody', async () => {
    const dir = directory({ SOK: ['U0ALICE'], SLIMIT: { error: 'ratelimited' } }, { U0GONE: { deleted: true, bot: false } });
    expect(await warned(dir, { kind: 'escalated', data: { mention: { users: ['U0GONE'], groups: ['SOK'] } } }, true)).toBeUndefined();
    expect(await warned(dir, { kind: 'escalated', data: { mention: { users: [], groups: ['SLIMIT'] } } }, true)).toBeUndefined();
    // An account Slack could not say anything about is not known to be unfit.
    expect(await warned(dir, { kind: 'reminder', data: { ownerUser: 'U0UNKNOWN' } }, false)).toBeUndefined();
    expect(await warned(dir, { kind: 'failure_recorded', data: {} }, false)).toBeUndefined();
    expect(await warned(dir, { kind: 'escalated', data: { mention: { users: [], groups: ['SGONE'] } } }, true)).toContain('<!subteam^SGONE> is disabled or deleted in Slack');
  });
});
