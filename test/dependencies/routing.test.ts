import { describe, expect, it } from 'vitest';
import { routeOf, routesFor, shouldRoute } from '../../src/ledger/destinations.js';

/** The "also affected" list grows by edits: Slack edits its one reply; other destinations hear the first list only. */
describe('routing upstream_affected', () => {
  const email = routeOf({ kind: 'email', to: ['ops@acme.example.com'] }, undefined);
  const webhook = routeOf({ kind: 'webhook', url: 'https://hooks.example.com/x', secret: 'a-long-enough-secret' }, 'destination-id-key');
  const [channel, platform] = routesFor({ channel: 'CACME' }, { PLATFORM_CHANNEL: 'CPLATFORM' });

  it.each([
    ['the first list goes everywhere that hears the alert', false, { channel: true, platform: true, email: true, webhook: true }],
    ['an update only to Slack, which edits its reply', true, { channel: true, platform: true, email: false, webhook: false }],
  ])('%s', (_, update, expected) => {
    const routed = (r: typeof email) => shouldRoute(r, 'upstream_affected', 'critical', true, update);
    expect({ channel: routed(channel!), platform: routed(platform!), email: routed(email), webhook: routed(webhook) }).toEqual(expected);
  });
});
