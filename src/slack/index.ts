import { App, ExpressReceiver } from '@slack/bolt';
import { Router, type Express } from 'express';
import { slackMode } from '../config/env.js';
import type { Deps } from '../deps.js';
import type { LoopSpec } from '../engine/runner.js';
import type { HousekeepingJob } from '../engine/housekeeping.js';
import { digestJob } from './views/digest.js';
import { digestMailer } from '../notify/digest-mail.js';
import { createOutboxSender, type SenderOptions } from '../notify/sender.js';
import { destinationTransports } from '../notify/transports/index.js';
import { consoleOutboxApi } from './transport/console-sink.js';
import { createHomeRefresher } from './views/home.js';
import { registerListeners } from './listeners/index.js';
import { createRootRefresher } from './transport/root-refresher.js';
import { createHeldBackNotes } from './transport/held-back-notes.js';
import { createMaintenanceNotes } from './transport/maintenance-notes.js';
import { createWebClient, SLACK_CALL_TIMEOUT_MS, slackLogger, timedFetch, webOutboxApi, type SlackOutboxApi } from './transport/slack-api.js';
import { slackTransport } from './transport/slack-transport.js';
import { botAuthorization } from './transport/bot-authorization.js';
import { slackRequestGuard } from './listeners/request-guard.js';
import { firstSlackReceipt } from '../ledger/slack-requests.js';
import { platformOutageNotice } from './transport/outage-notice.js';
import { webDirectory, type SlackDirectory } from './transport/directory.js';

export interface SlackRuntime {
  /** Loops that deliver the outbox (Slack and other destinations). */
  loops: LoopSpec[];
  /** Wall-clock jobs that post to Slack: the tenants' digests. */
  housekeeping: HousekeepingJob[];
  stop(): Promise<void>;
}

export interface SlackOptions {
  /** Where the console sink prints (default stdout). */
  consoleWrite?: (line: string) => void;
  sender?: SenderOptions;
  /** Web API client timeout for outbox calls. */
  timeoutMs?: number;
}

/**
 * Slack for one replica. HTTP mode mounts Bolt on the app's express server at
 * POST /slack/events (Bolt verifies each request's signature and age; a bad
 * or stale one gets 401 before any listener runs). Socket Mode connects out
 * with the app token. Without credentials, messages go to the console.
 * Either way the outbox loops are returned for the app to run.
 */
export async function startSlack(http: Express, deps: Deps, options: SlackOptions = {}): Promise<SlackRuntime> {
  const { config, logger } = deps;
  const mode = slackMode(config);
  let api: SlackOutboxApi;
  let bolt: App | undefined;
  let directory: SlackDirectory | undefined;

  if (mode === 'console') {
    logger.info('no Slack credentials (SLACK_BOT_TOKEN): alert messages are printed to the console instead of posted');
    api = consoleOutboxApi(options.consoleWrite);
  } else {
    const token = config.SLACK_BOT_TOKEN!;
    api = webOutboxApi(createWebClient(token, { apiUrl: config.SLACK_API_URL, timeoutMs: options.timeoutMs, logger }));
    // Bolt's own calls (views.open, chat.postEphemeral, respond() through `fetch`) get a deadline too.
    const clientOptions = { ...(config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {}), retryConfig: { retries: 1 }, timeout: SLACK_CALL_TIMEOUT_MS, fetch: timedFetch() };
    const boltLogger = slackLogger(logger);
    if (mode === 'http') {
      const router = Router();
      router.post('/slack/events', ...slackRequestGuard(config.SLACK_SIGNING_SECRET!, Date.now, { firstReceipt: (...a) => firstSlackReceipt(deps.db, ...a) }));
      const receiver = new ExpressReceiver({ signingSecret: config.SLACK_SIGNING_SECRET!, endpoints: '/slack/events', router, logger: boltLogger });
      bolt = new App({ authorize: botAuthorization(token, clientOptions, logger, deps.clock), receiver, clientOptions, logger: boltLogger });
      http.use(router);
    } else {
      // The Socket Mode client has its own WebClient (apps.connections.open, with the app token),
      // which Bolt gives the bot's clientOptions unless installerOptions.clientOptions says
      // otherwise. It must not inherit `retries: 1` (meant for the outbox, which owns its retries):
      // a Slack blip while it fetches a URL would then stop the replica from ever reconnecting.
      // Only the URL is passed, so it keeps its own long retry chain.
      const socketClientOptions = config.SLACK_API_URL ? { slackApiUrl: config.SLACK_API_URL } : {};
      bolt = new App({
        authorize: botAuthorization(token, clientOptions, logger, deps.clock),
        appToken: config.SLACK_APP_TOKEN!,
        socketMode: true,
        clientOptions,
        installerOptions: { clientOptions: socketClientOptions },
        logger: boltLogger,
      });
    }
    bolt.error(async (error) => {
      logger.error({ err: error }, 'Slack listener failed');
    });
    directory = webDirectory(createWebClient(token, { apiUrl: config.SLACK_API_URL, timeoutMs: options.timeoutMs, logger }), deps.clock, logger);
    registerListeners(bolt, { deps, api, directory });
    if (mode === 'socket') await bolt.start();
    logger.info({ mode }, 'Slack connected');
  }

  const transport = slackTransport(deps, api, directory);
  const sender = createOutboxSender(deps, [transport, ...destinationTransports(deps)], {
    noticeAfterMs: config.DESTINATION_OUTAGE_NOTICE_MINUTES * 60_000,
    onOutage: platformOutageNotice(api, config.PLATFORM_CHANNEL),
    ...options.sender,
  });
  const roots = createRootRefresher(deps, api);
  const home = createHomeRefresher(deps, api, directory);
  const maintenanceNotes = createMaintenanceNotes(deps, api);
  const heldBackNotes = createHeldBackNotes(deps, api);
  const loops = [sender.loop, roots.loop, maintenanceNotes.loop, heldBackNotes.loop, ...(mode === 'console' ? [] : [home.loop])];
  return {
    loops,
    housekeeping: [digestJob(deps, api, digestMailer(deps))],
    async stop() {
      if (mode === 'socket') await bolt?.stop();
    },
  };
}
