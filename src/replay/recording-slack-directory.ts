import { str } from './recording-slack-wire.js';

/** A person as `users.info` describes them; only the fields the bot reads. */
export interface StandInUser {
  deleted?: boolean;
  is_bot?: boolean;
  /** A Slack Connect user from another organisation. */
  team_id?: string;
}

/**
 * The workspace's people as the recording Slack stand-in tells them: who is
 * in which channel (`conversations.members`), which user group
 * (`usergroups.users.list`; a disabled group is refused as Slack refuses it
 * without `include_disabled`) and what `users.info` says of a person
 * (anyone not set is an ordinary active member of the workspace; the bot's own user is a bot). Set by tests.
 */
export class StandInDirectory {
  readonly channelMembers = new Map<string, string[]>();
  readonly groupMembers = new Map<string, string[]>();
  readonly disabledGroups = new Set<string>();
  readonly users = new Map<string, StandInUser>();

  constructor(
    private readonly teamId: string,
    /** The bot's own user: a bot, as users.info says. */
    private readonly botUserId: string,
  ) {}

  /** The answer to a directory method, or undefined for any other method. */
  answer(method: string, a: Record<string, unknown>, channel: string | undefined): Record<string, unknown> | undefined {
    switch (method) {
      case 'conversations.members': {
        const members = this.channelMembers.get(channel ?? '');
        return members ? { ok: true, members, response_metadata: { next_cursor: '' } } : { ok: false, error: 'channel_not_found' };
      }
      case 'usergroups.users.list': {
        const group = str(a.usergroup) ?? '';
        const users = this.groupMembers.get(group);
        if (!users) return { ok: false, error: 'no_such_subteam' };
        const withDisabled = a.include_disabled === true || a.include_disabled === 'true';
        if (this.disabledGroups.has(group) && !withDisabled) return { ok: false, error: 'no_such_subteam' };
        return { ok: true, users };
      }
      case 'users.info': {
        const id = str(a.user);
        if (!id) return { ok: false, error: 'user_not_found' };
        const u = this.users.get(id) ?? (id === this.botUserId ? { is_bot: true } : {});
        return { ok: true, user: { id, team_id: u.team_id ?? this.teamId, name: id.toLowerCase(), deleted: u.deleted ?? false, is_bot: u.is_bot ?? false } };
      }
      default:
        return undefined;
    }
  }
}
