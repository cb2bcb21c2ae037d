import { outboxBacklog } from './slack-outbox.js';
import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { ManualClock, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/env.js';
import type { Db } from '../../src/db/connect.js';
import type { Deps } from '../../src/deps.js';
import type { LauncherResolver } from '../../src/launcher.js';
import { silentLogger } from '../../src/log.js';
import { startSlack, type SlackRuntime } from '../../src/slack/index.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { T0 } from './factories.js';

export const SIGNING_SECRET = 'test-signing-secret-0123456789';

/**
 * Numbers each request's trigger, response URL and event id, across every rig
 * of the process: no two requests Slack sends are alike, and the bot refuses a
 * signature it has already taken (a replay), so two rigs on one database must
 * not send the same body in the same second.
 */
let seq = 0;

/** Slack's request signature: `v0=` HMAC-SHA256 of `v0:{timestamp}:{raw body}` with the signing secret. */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export interface SlackRig {
  url: string;
  clock: ManualClock;
  slack: RecordingSlackApi;
  deps: Deps;
  runtime: SlackRuntime;
  /** POSTs to /slack/events signed as Slack signs (override the secret or the age to test refusals). */
  send(body: string, contentType: string, sign?: { secret?: string; ageSeconds?: number }): Promise<{ status: number; text: string }>;
  command(text: string, who: { channel: string; user?: string }, sign?: { secret?: string; ageSeconds?: number }): Promise<{ status: number; text: string }>;
  interact(payload: Record<string, unknown>, sign?: { secret?: string; ageSeconds?: number }): Promise<{ status: number; text: string }>;
  /** A click on a button (value) or a select or overflow option (selected); blockId defaults to the root's actions block. */
  click(action: { actionId: string; value?: string; selected?: string; channel: string; user?: string; blockId?: string; messageTs?: string }): Promise<{ status: number; text: string }>;
  event(event: Record<string, unknown>): Promise<{ status: number; text: string }>;
  /** Runs the outbox loops until nothing is pending, moving the clock when they are idle. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** The real Bolt receiver on a local express server, Slack's Web API played by the recording server. */
export async function startSlackRig(db: Db, options: { env?: Record<string, string>; launchers?: LauncherResolver; start?: Date; clock?: ManualClock } = {}): Promise<SlackRig> {
  const clock = options.clock ?? new ManualClock(options.start ?? T0);
  const slack = await RecordingSlackApi.start({ clock });
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    PLATFORM_CHANNEL: 'CPLAT',
    REPLICA_ID: 'slack-rig',
    ...options.env,
  });
  const deps: Deps = { db, clock, config, logger: silentLogger, replicaId: config.REPLICA_ID, launchers: options.launchers ?? (() => undefined) };
  const http = express();
  const runtime = await startSlack(http, deps, { timeoutMs: 2000 });
  const server = await new Promise<Server>((resolve) => {
    const s = http.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function send(body: string, contentType: string, sign: { secret?: string; ageSeconds?: number } = {}) {
    const ts = Math.floor(systemClock.now().getTime() / 1000) - (sign.ageSeconds ?? 0);
    const res = await fetch(`${url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSignature(sign.secret ?? SIGNING_SECRET, ts, body) },
      body,
    });
    return { status: res.status, text: await res.text() };
  }

  const rig: SlackRig = {
    url,
    clock,
    slack,
    deps,
    runtime,
    send,
    command(text, who, sign) {
      const body = new URLSearchParams({
        token: 'legacy',
        team_id: 'T0TEST',
        team_domain: 'example',
        channel_id: who.channel,
        channel_name: 'alerts',
        user_id: who.user ?? 'U0ALICE',
        user_name: 'alice',
        command: '/scheduler',
        text,
        api_app_id: 'A0TEST',
        response_url: slack.responseUrl(`cmd${++seq}`),
        trigger_id: `trigger-${seq}`,
      }).toString();
      return send(body, 'application/x-www-form-urlencoded', sign);
    },
    interact(payload, sign) {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return send(body, 'application/x-www-form-urlencoded', sign);
    },
    click(a) {
      const n = ++seq;
      const action: Record<string, unknown> = { action_id: a.actionId, block_id: a.blockId ?? 'alert_actions', action_ts: `${n}.0`, type: a.selected ? 'static_select' : 'button' };
      if (a.selected) action.selected_option = { value: a.selected, text: { type: 'plain_text', text: a.selected } };
      else action.value = a.value;
      return rig.interact({
        type: 'block_actions',
        team: { id: 'T0TEST', domain: 'example' },
        user: { id: a.user ?? 'U0ALICE', username: 'alice', team_id: 'T0TEST' },
        api_app_id: 'A0TEST',
        token: 'legacy',
        container: { type: 'message', message_ts: a.messageTs ?? '1.0', channel_id: a.channel, is_ephemeral: false },
        trigger_id: `trigger-${n}`,
        channel: { id: a.channel, name: 'alerts' },
        message: { type: 'message', ts: a.messageTs ?? '1.0', text: 'root' },
        response_url: slack.responseUrl(`act${n}`),
        actions: [action],
      });
    },
    event(event) {
      const body = JSON.stringify({ token: 'legacy', team_id: 'T0TEST', api_app_id: 'A0TEST', type: 'event_callback', event_id: `Ev${++seq}`, event_time: 1, event });
      return send(body, 'application/json');
    },
    async drain() {
      const started = clock.now().getTime();
      for (;;) {
        let busy = false;
        for (const loop of runtime.loops) if (await loop.tick()) busy = true;
        if (busy) continue;
        const { open, stale } = await outboxBacklog(db, { dueBefore: new Date(clock.now().getTime() + 3_600_000) });
        if (open === 0 && stale === 0) return;
        if (clock.now().getTime() - started > 3_600_000) throw new Error('outbox did not drain within an hour of clock time');
        clock.advance(250);
      }
    },
    async close() {
      await runtime.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await slack.close();
    },
  };
  return rig;
}

export { eventually } from './eventually.js';
