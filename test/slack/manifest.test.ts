import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../../src/slack/blocks/help.js';

/** The manifest must agree with what the code listens for and calls. */
describe('manifest.json', () => {
  it('points commands, interactivity and events at /slack/events and asks for the fewest scopes that work', async () => {
    const m = JSON.parse(await readFile(new URL('../../manifest.json', import.meta.url), 'utf8'));
    const [command] = m.features.slash_commands;
    expect(command.command).toBe('/scheduler');
    for (const sub of Object.keys(USAGE)) expect(command.usage_hint).toContain(sub);
    for (const url of [command.url, m.settings.interactivity.request_url, m.settings.event_subscriptions.request_url]) expect(new URL(url).pathname).toBe('/slack/events');
    expect(m.settings.interactivity.is_enabled).toBe(true);
    expect(m.settings.event_subscriptions.bot_events).toEqual(['app_home_opened']);
    expect(m.features.app_home.home_tab_enabled).toBe(true);
    // chat:write posts and updates; commands for /scheduler; *:history to look a message up by its metadata key after an unknown outcome;
    // *:read for conversations.members (App Home by membership); usergroups:read for usergroups.users.list (rights naming groups).
    expect(m.oauth_config.scopes.bot.sort()).toEqual(['channels:history', 'channels:read', 'chat:write', 'commands', 'groups:history', 'groups:read', 'usergroups:read', 'users:read']);
    // Escaped, so `/scheduler reassign wf @alice` arrives as <@U…|alice>.
    expect(command.should_escape).toBe(true);
  });
});
