import type { App } from '@slack/bolt';
import { z } from 'zod';
import { renderStormMessage } from '../../blocks/storm-message.js';
import { ACTION } from '../../blocks/ids.js';
import { loadStormView, stormRenderedOutOfBand } from '../../views/storm-queries.js';
import { scopeForChannel, UNLINKED_TEXT } from '../tenancy.js';
import type { SlackContext } from '../context.js';
import { alertActionBody } from '../payloads.js';
import { failureAnswer } from '../answers.js';
import { ephemeral, type ActionArgs } from './alert-action.js';
import { releaseHandler, takeHandler } from './ownership.js';
import { resolveHandler } from './resolve.js';
import { silenceHandler } from './silence.js';

const stormMenuBody = alertActionBody.extend({
  actions: z.array(z.object({ action_id: z.string(), block_id: z.string().regex(/^storm:\d{1,15}:\d{1,15}$/, 'a storm message block'), selected_option: z.object({ value: z.string() }) })).min(1),
});
const choiceValue = z.string().regex(/^\d{1,15}:(take|release|silence|resolve)(:[a-z0-9]+)?$/, '<alertId>:<take|release|silence|resolve>[:<choice>]');

/**
 * The ⋯ menu beside each alert in a storm message: Take ownership / Release,
 * Silence, Resolve… on that alert alone, through the same handlers (scope,
 * rights, service) as its own root's buttons. The answer is the storm message
 * re-rendered in place from the state just committed.
 */
export function registerStormMenuAction(app: App, ctx: SlackContext): void {
  const handlers = { take: takeHandler(ctx), release: releaseHandler(ctx), silence: silenceHandler(ctx) };
  const resolve = resolveHandler(ctx);
  app.action(ACTION.stormAlertMenu, async (args: ActionArgs) => {
    await args.ack();
    const log = ctx.deps.logger.child({ action: ACTION.stormAlertMenu });
    try {
      await choose(args, log);
    } catch (error) {
      await ephemeral(args, failureAnswer(log, error, 'click'));
    }
  });

  async function choose(args: ActionArgs, log: SlackContext['deps']['logger']): Promise<void> {
    const body = stormMenuBody.safeParse(args.body);
    const action = body.success ? body.data.actions[0]! : undefined;
    const value = choiceValue.safeParse(action?.selected_option.value);
    if (!body.success || !action || !value.success) {
      const error = body.success ? (value.error?.issues[0]?.message ?? 'no choice') : `${body.error.issues[0]?.path.join('.')}: ${body.error.issues[0]?.message}`;
      log.warn({ error }, 'refused malformed storm menu payload');
      await ephemeral(args, `Sorry, I couldn't read that click (${error}).`);
      return;
    }
    const [idText, verb, choice] = value.data.split(':') as [string, 'take' | 'release' | 'silence' | 'resolve', string | undefined];
    const channel = body.data.channel?.id;
    const where = await scopeForChannel(ctx.deps.db, ctx.deps.config, channel);
    if (where.kind === 'unlinked') {
      await ephemeral(args, UNLINKED_TEXT);
      return;
    }
    const a = { alertId: Number(idText), user: body.data.user.id, channel, triggerId: body.data.trigger_id, choice, messageTs: undefined, scope: where.scope };
    const answer = verb === 'resolve' ? await resolve(a, args) : await handlers[verb](a);
    if (answer) {
      await ephemeral(args, answer);
      return;
    }
    if (verb === 'resolve') return; // the modal is open; its submission resolves, and the refresher re-renders the storm
    const view = await loadStormView(ctx.deps.db, Number(action.block_id.split(':')[1]), ctx.deps.clock.now());
    // Only the storm of the channel clicked in: a block id naming another channel's storm renders nothing.
    if (!view || view.storm.channel !== channel) return;
    await args.respond({ replace_original: true, ...renderStormMessage(view) } as never);
    await stormRenderedOutOfBand(ctx.deps.db, view.storm.id, view.eventId);
  }
}
