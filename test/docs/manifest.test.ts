import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { USAGE } from '../../src/slack/blocks/help.js';

/** The bot scopes each Web API method the bot calls needs (api.slack.com/methods); views.* need none. */
const SCOPES_OF: Record<string, string[]> = {
  'chat.postMessage': ['chat:write'],
  'chat.update': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'conversations.history': ['channels:history', 'groups:history'],
  'conversations.replies': ['channels:history', 'groups:history'],
  'conversations.members': ['channels:read', 'groups:read'],
  'usergroups.users.list': ['usergroups:read'],
  'users.info': ['users:read'],
  'views.open': [],
  'views.publish': [],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const manifest = JSON.parse(readFileSync('manifest.json', 'utf8'));

describe('manifest.json', () => {
  it('asks for the scopes of the Web API methods the bot calls, and no more', () => {
    const called = new Set<string>();
    for (const file of sources('src/slack')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/client\.((?:chat|conversations|usergroups|views|users|reactions|team)(?:\.\w+)+)\(/g)) called.add(m[1]!);
    }
    expect([...called].filter((m) => !(m in SCOPES_OF))).toEqual([]);
    const needed = new Set(['commands', ...[...called].flatMap((m) => SCOPES_OF[m]!)]);
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...needed].sort());
  });

  it('points the command, interactivity and events at /slack/events, with App Home on', () => {
    const urls = [manifest.features.slash_commands[0].url, manifest.settings.interactivity.request_url, manifest.settings.event_subscriptions.request_url];
    expect(urls.every((u: string) => new URL(u).pathname === '/slack/events')).toBe(true);
    expect(manifest.features.slash_commands.map((c: { command: string }) => c.command)).toEqual(['/scheduler']);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.app_home.home_tab_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['app_home_opened']);
  });

  it('the bot listens where the manifest points Slack: the same path, command and events', () => {
    const code = sources('src/slack').map((f) => readFileSync(f, 'utf8')).join('\n');
    expect([...code.matchAll(/endpoints: '([^']+)'/g)].map((m) => m[1])).toEqual([new URL(manifest.settings.event_subscriptions.request_url).pathname]);
    expect([...code.matchAll(/app\.command\('([^']+)'/g)].map((m) => m[1]).sort()).toEqual(manifest.features.slash_commands.map((c: { command: string }) => c.command).sort());
    expect([...code.matchAll(/app\.event\('([^']+)'/g)].map((m) => m[1]).sort()).toEqual([...manifest.settings.event_subscriptions.bot_events].sort());
    // An options load URL would be needed for external selects, which the bot does not use.
    expect(code).not.toMatch(/app\.options\(/);
  });

  it('the README names the same scopes and counts the URLs to replace truly', () => {
    const readme = readFileSync('README.md', 'utf8');
    const setup = readme.slice(readme.indexOf('## Slack app setup'), readme.indexOf('### HTTP mode'));
    expect([...new Set([...setup.matchAll(/`([a-z]+:[a-z]+|commands)`/g)].map((m) => m[1]!))].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
    const placeholder = /Replace `(https:\/\/[^`]+)` in `manifest.json` with the bot's\s+public URL \((\w+) places/.exec(readme);
    expect(placeholder).not.toBeNull();
    const count = readFileSync('manifest.json', 'utf8').split(placeholder![1]!).length - 1;
    expect({ one: 1, two: 2, three: 3, four: 4 }[placeholder![2]!]).toBe(count);
  });

  it('docs/slack.md lists the same scopes', () => {
    const page = readFileSync('docs/slack.md', 'utf8');
    const table = page.slice(page.indexOf('## Scopes'));
    const listed = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z:]+)`/g)].map((s) => s[1]!));
    expect(listed.sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
  });

  it('docs/slack.md and the usage hint name every /scheduler subcommand of the help', () => {
    const page = readFileSync('docs/slack.md', 'utf8');
    const hint = manifest.features.slash_commands[0].usage_hint as string;
    expect(Object.keys(USAGE).filter((sub) => !page.includes(`/scheduler ${sub}`))).toEqual([]);
    expect(Object.keys(USAGE).filter((sub) => !new RegExp(`(^|\\| )${sub}\\b`).test(hint))).toEqual([]);
  });
});
