import { describe, expect, it } from 'vitest';
import { plainText, renderReplayText } from '../../src/replay/render-text.js';
import type { ReplayResult } from '../../src/replay/replay-scenario.js';
import { checkScenario } from '../../src/replay/scenario.js';
import type { TranscriptCall } from '../../src/replay/transcript.js';

const scenario = checkScenario({
  start: '2026-03-10T01:55:00Z',
  until: '2026-03-10T09:30:00Z',
  platformChannel: 'CPLATFORM',
  tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
  workflows: [{ tenant: 'acme', name: 'quality-check', cron: '*/5 * * * *' }],
});

const meta = (event: string) => ({ event_type: 'scheduler_alert', event_payload: { alert_id: 1, tenant: 'acme', workflow: 'quality-check', event, severity: 'warning', key: `k-${event}` } });
const post = (at: string, channel: string, ts: string, threadTs: string | null, text: string, event: string): TranscriptCall => ({
  at: `2026-03-10T${at}.000Z`,
  method: 'chat.postMessage',
  channel,
  ts,
  thread_ts: threadTs,
  text,
  blocks: [],
  metadata: meta(event),
});
const update = (at: string, channel: string, ts: string, text: string): TranscriptCall => ({ ...post(at, channel, ts, null, text, 'opened'), method: 'chat.update' });

function result(calls: TranscriptCall[]): ReplayResult {
  return {
    scenario,
    transcript: { calls, summary: { alerts: 1, roots: 2, replies: 2, updates: 4, failedTicks: 7 } },
    oneMessagePerFailure: 14,
    actions: [{ at: new Date('2026-03-10T02:30:00Z'), user: 'U_ENG', channel: 'CPLATFORM', action: 'take_ownership', workflow: 'acme/quality-check', result: 'ok' }],
    instants: 12,
    elapsedMs: 1234,
    phaseMs: {},
  };
}

describe('the text transcript', () => {
  it('numbers threads, marks replies, folds runs of root updates per thread and places actions in time', () => {
    const text = renderReplayText(
      result([
        post('02:16:00', 'CACME', '1.1', null, 'Warning (open): Acme / quality-check, 3 failures', 'opened'),
        post('02:16:00', 'CPLATFORM', '1.2', null, 'Warning (open): Acme / quality-check, 3 failures', 'opened'),
        update('02:21:00', 'CACME', '1.1', 'Warning (open): 4 failures'),
        update('02:26:00', 'CACME', '1.1', 'Warning (open): 5 failures'),
        update('02:26:01', 'CPLATFORM', '1.2', 'Warning (open): 5 failures'),
        post('02:30:00', 'CACME', '1.3', '1.1', 'Taken by <@U_ENG>.', 'owner_changed'),
        update('02:31:00', 'CACME', '1.1', 'Warning (owned): 6 failures'),
      ]),
      'night.json',
    );
    const lines = text.split('\n');
    const row = (pattern: RegExp) => lines.filter((l) => pattern.test(l));
    expect(row(/#1 new/)).toHaveLength(1);
    expect(row(/#2 new/)).toHaveLength(1);
    // Two updates of #1 in a row fold into one line; the reply ends the fold, so the next update starts a new one.
    expect(row(/#1 ✎×2 .*root updated 02:21–02:26, now: Warning \(open\): 5 failures/)).toHaveLength(1);
    expect(row(/#2 ✎ .*root updated: Warning \(open\): 5 failures/)).toHaveLength(1);
    expect(row(/#1 ↳ .*Taken by @U_ENG\./)).toHaveLength(1);
    expect(row(/#1 ✎ .*Warning \(owned\)/)).toHaveLength(1);
    // The action sits before the reply it caused (same instant, actions first).
    const action = lines.findIndex((l) => /action .*U_ENG: take ownership quality-check → ok/.test(l));
    expect(action).toBeGreaterThan(-1);
    expect(action).toBeLessThan(lines.findIndex((l) => /#1 ↳/.test(l)));
    expect(text).toMatch(/One message per failure would have been 14 messages/);
    expect(text).toMatch(/this replay posted 4 in 2 threads/);
  });

  it('says so when nothing was posted', () => {
    expect(renderReplayText(result([]), 'night.json')).toMatch(/\(no Slack messages\)/);
  });

  it('shows Slack mrkdwn as a terminal would: date fallbacks, @mentions, no emphasis markers', () => {
    expect(plainText('Silenced by <@U_ENG> until <!date^1773112500^{date_short_pretty} {time}|2026-03-10 03:15 UTC>.')).toBe('Silenced by @U_ENG until 2026-03-10 03:15 UTC.');
    expect(plainText('Escalated to *critical*: _kept failing_')).toBe('Escalated to critical: kept failing');
    expect(plainText('error: a*b*c &lt;!channel&gt;')).toBe('error: a*b*c <!channel>');
  });
});
