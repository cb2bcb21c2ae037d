import type { AllMiddlewareArgs, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { metrics } from '../../../metrics.js';
import { failureAnswer } from '../answers.js';
import type { Tenant } from '../../../db/schema.js';
import type { SlackAction } from '../../../domain/rights.js';
import type { Scope } from '../../../ledger/alert-queries.js';
import { loadAlertCard } from '../../views/alert-card-loader.js';
import { renderAlertReply, renderAlertRoot } from '../../blocks/alert-card.js';
import { renderedOutOfBand } from '../../transport/alert-threads.js';
import { refusalFor } from '../rights.js';
import { scopeForChannel, UNLINKED_TEXT } from '../tenancy.js';
import type { SlackContext } from '../context.js';
import { parseAlertAction, type ParsedAlertAction } from '../payloads.js';

export type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;

/**
 * The shape every alert button shares: ack at once, validate the payload,
 * work out the scope from the channel, run one service call, and answer the
 * clicker privately when there is something to say.
 */
export function alertAction(
  ctx: SlackContext,
  name: string,
  handle: (a: ParsedAlertAction & { scope: Scope }, args: ActionArgs) => Promise<string | undefined>,
  /** answerInPlace: the root clicked is replaced by the state just committed; 'reminder': the reminder reply clicked says it was answered. */
  options: { answerInPlace?: boolean | 'reminder' } = {},
) {
  return async (args: ActionArgs): Promise<void> => {
    await args.ack();
    const log = ctx.deps.logger.child({ action: name });
    try {
      await act(args, log);
    } catch (error) {
      await ephemeral(args, failureAnswer(log, error, 'click'));
    }
  };

  async function act(args: ActionArgs, log: SlackContext['deps']['logger']): Promise<void> {
    const parsed = parseAlertAction(args.body);
    if (!parsed.ok) {
      log.warn({ error: parsed.error }, 'refused malformed action payload');
      await ephemeral(args, `Sorry, I couldn't read that click (${parsed.error}).`);
      return;
    }
    const where = await scopeForChannel(ctx.deps.db, ctx.deps.config, parsed.value.channel);
    if (where.kind === 'unlinked') {
      await ephemeral(args, UNLINKED_TEXT);
      return;
    }
    const answer = await handle({ ...parsed.value, scope: where.scope }, args);
    if (answer) await ephemeral(args, answer);
    else if (options.answerInPlace === 'reminder') await answerReminderInPlace(ctx, parsed.value, args);
    else if (options.answerInPlace) await answerInPlace(ctx, parsed.value, args);
  }
}

/**
 * The click's own answer: the message clicked is replaced at once, through
 * the click's response_url, by the root rendered from the state just
 * committed. The paced outbox still posts the thread reply (exactly once) and
 * the root refresher still updates the other channel's root, and renders this
 * one again should it have shown a newer state before this answer landed.
 */
async function answerInPlace(ctx: SlackContext, at: Pick<ParsedAlertAction, 'alertId' | 'channel' | 'messageTs'>, args: Pick<ActionArgs, 'respond'>): Promise<void> {
  const loaded = await loadAlertCard(ctx.deps.db, ctx.deps.launchers, at.alertId);
  if (!loaded) return;
  await args.respond({ replace_original: true, ...renderAlertRoot(loaded.card, ctx.deps.clock.now()) } as never);
  if (at.channel) await renderedOutOfBand(ctx.deps.db, { alertId: at.alertId, channel: at.channel, rootTs: at.messageTs, eventId: loaded.eventId });
}

/**
 * A reminder's Take ownership, answered in the reply clicked (never replaced
 * by the root): the reminder re-rendered from its event (`<alertId>:<eventId>`)
 * with who answered and when, in place of the button.
 */
async function answerReminderInPlace(ctx: SlackContext, at: Pick<ParsedAlertAction, 'alertId' | 'choice' | 'user'>, args: Pick<ActionArgs, 'respond'>): Promise<void> {
  const eventId = Number(at.choice);
  if (!Number.isSafeInteger(eventId) || eventId <= 0) return;
  const event = await ctx.deps.db.selectFrom('alertEvents').selectAll().where('id', '=', eventId).where('alertId', '=', at.alertId).where('kind', '=', 'reminder').executeTakeFirst();
  const loaded = event && (await loadAlertCard(ctx.deps.db, ctx.deps.launchers, at.alertId));
  if (!event || !loaded) return;
  const now = ctx.deps.clock.now();
  await args.respond({ replace_original: true, ...renderAlertReply(event, loaded.card, now, { by: at.user, at: now }) } as never);
}

/** The rights check every alert listener makes once it knows the alert's tenant: undefined means allowed. */
export function refuse(ctx: SlackContext, user: string, action: SlackAction, tenant: Pick<Tenant, 'name' | 'rights'>): Promise<string | undefined> {
  return refusalFor({ action, user, tenant, channelMember: true }, ctx.deps.config, ctx.directory);
}

export async function ephemeral(args: Pick<ActionArgs, 'respond'>, text: string): Promise<void> {
  await args.respond({ response_type: 'ephemeral', replace_original: false, text });
}

/** Opens a modal for the click's trigger id, counted in the Slack call metrics either way. */
export async function openModal(args: Pick<ActionArgs, 'client'>, triggerId: string, view: unknown): Promise<void> {
  try {
    await args.client.views.open({ trigger_id: triggerId, view: view as never });
    metrics.slackCalls.inc({ method: 'views.open', result: 'ok' });
  } catch (error) {
    metrics.slackCalls.inc({ method: 'views.open', result: 'error' });
    throw error;
  }
}
