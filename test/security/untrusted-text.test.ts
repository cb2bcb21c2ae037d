import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { cutText, hasLoneSurrogate, wellFormed } from '../../src/domain/text.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { createOutboxSender } from '../../src/notify/sender.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { renderHistory } from '../../src/slack/blocks/history.js';
import { cutMrkdwn, escapeMrkdwn, plain, truncate } from '../../src/slack/blocks/limits.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { hashToken } from '../../src/secrets.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';

/**
 * Text from runs is cut to fit Slack's limits. Cut in the middle of an emoji
 * (two UTF-16 units), it leaves half a character that no UTF-8 encoder takes:
 * Slack's client threw "URI malformed" on every attempt and the alert never
 * reached its channel. A tenant (or a job that prints emoji) could mute its
 * own alerts, and any alert sharing the text, this way.
 */

const EMOJI = '\u{1F600}';

describe('cutting text by whole characters', () => {
  it('never ends inside a surrogate pair, and lone surrogates become U+FFFD', () => {
    expect(cutText(`ab${EMOJI}`, 3)).toBe('ab');
    expect(cutText(`ab${EMOJI}`, 4)).toBe(`ab${EMOJI}`);
    expect(wellFormed('x\ud800y\udc00z')).toBe('x\uFFFDy\uFFFDz');
    const long = `x${EMOJI.repeat(200)}`;
    for (let max = 20; max < 60; max++) {
      expect(hasLoneSurrogate(truncate(long, max))).toBe(false);
      expect(hasLoneSurrogate(cutMrkdwn(long, max))).toBe(false);
      expect(hasLoneSurrogate(cutMrkdwn(`\`\`\`${long}\`\`\``, max))).toBe(false);
      expect(hasLoneSurrogate(plain(long, max).text)).toBe(false);
    }
    expect(escapeMrkdwn('<!channel> \ud800')).toBe('&lt;!channel&gt; \uFFFD');
    const history = renderHistory('nightly', [{ runId: 1, tick: T0, trigger: 'schedule', status: 'failed', error: `${'E'.repeat(99)}${EMOJI}`, outcomeNote: null, startedAt: null, finishedAt: null, attempts: 1 } as never]);
    expect(hasLoneSurrogate(JSON.stringify(history))).toBe(false);
  });
});

describe('an error whose cut falls inside an emoji', () => {
  const TOKEN = 'sbt_text-probe-token-0123456789abcdefg';
  const BOT = 'xoxb-untrusted-text-token-0123';
  let t: TestDatabase;
  let slack: RecordingSlackApi;
  let app: Awaited<ReturnType<typeof startTestApp>>;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    t = await createTestDatabase();
    slack = await RecordingSlackApi.start({ clock });
    await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', apiTokenHash: hashToken(TOKEN) });
    await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
    app = await startTestApp(t, { SLACK_BOT_TOKEN: BOT, SLACK_SIGNING_SECRET: 'untrusted-text-signing-secret', SLACK_API_URL: slack.url, PLATFORM_CHANNEL: 'CPLAT' }, { clock });
  });
  afterAll(async () => {
    await app?.stop();
    await slack?.close();
    await t?.drop();
  });

  it('reaches Slack whole: the root is posted in both channels, with no half character anywhere', async () => {
    // The root's fallback text keeps the error's first 500 characters: 487 + 6.5 emoji.
    const error = `${'E'.repeat(487)}${EMOJI.repeat(20)} <!channel>`;
    const res = await apiClient(app.url, TOKEN)('POST', '/api/v1/runs', { tenant: 'acme', workflow: 'nightly', status: 'failed', tick: T0.toISOString(), error });
    expect(res.status).toBe(201);
    await pollFinishedRuns(app.deps);
    const client = createWebClient(BOT, { apiUrl: slack.url, timeoutMs: 2000, logger: app.deps.logger });
    const sender = createOutboxSender(app.deps, [slackTransport(app.deps, webOutboxApi(client))]);
    for (let i = 0; i < 50 && (await t.db.selectFrom('notifications').select('id').where('status', 'in', ['pending', 'sending']).execute()).length > 0; i++) {
      if (!(await sender.tick())) clock.advance(1000);
    }
    const notifications = await t.db.selectFrom('notifications').select(['destination', 'status', 'lastError']).orderBy('destination').execute();
    expect(notifications).toEqual([
      { destination: 'slack:CACME', status: 'sent', lastError: null },
      { destination: 'slack:CPLAT', status: 'sent', lastError: null },
    ]);
    for (const channel of ['CACME', 'CPLAT']) {
      const [root] = slack.roots(channel);
      expect(root).toBeDefined();
      expect(hasLoneSurrogate(root!.text)).toBe(false);
      expect(root!.text).toContain(`EEE${EMOJI}`);
      expect(JSON.stringify(root!.blocks)).not.toContain('<!channel>');
    }
  });
});
