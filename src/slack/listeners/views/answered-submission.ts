import type { AllMiddlewareArgs, SlackViewAction, SlackViewMiddlewareArgs } from '@slack/bolt';
import { failureAnswer } from '../answers.js';
import type { SlackContext } from '../context.js';

export type ViewArgs = SlackViewMiddlewareArgs<SlackViewAction> & AllMiddlewareArgs;

/**
 * A modal's submission answered when it fails (docs/slack.md, "When an
 * answer fails"): a bug gets a reference to the log line, never the error
 * text; a database fault says nothing changed (`failureAnswer`). Before the
 * ack the modal is still open, so it is shown there, on `field`
 * (`response_action: 'errors'`); after it the modal has closed, so the
 * submitter is told privately in the channel the modal was opened from
 * (its private_metadata), else in a direct message.
 */
export function answeredSubmission(ctx: SlackContext, name: string, field: string, handle: (args: ViewArgs) => Promise<void>) {
  return async (args: ViewArgs): Promise<void> => {
    let acked = false;
    const ack = (async (response?: Parameters<ViewArgs['ack']>[0]) => {
      acked = true;
      await args.ack(response as never);
    }) as ViewArgs['ack'];
    const log = ctx.deps.logger.child({ view: name });
    try {
      await handle({ ...args, ack });
    } catch (error) {
      const text = failureAnswer(log, error, 'submission');
      if (!acked) return void (await args.ack({ response_action: 'errors', errors: { [field]: text } }));
      await tellSubmitter(args, text).catch((e: unknown) => log.warn({ error: e instanceof Error ? e.message : String(e) }, 'could not tell the submitter that the submission failed'));
    }
  };
}

async function tellSubmitter(args: ViewArgs, text: string): Promise<void> {
  const user = args.body.user.id;
  const channel = channelOf(args.body.view.private_metadata);
  if (channel) {
    try {
      await args.client.chat.postEphemeral({ channel, user, text });
      return;
    } catch {
      // Not a member of that channel any more, or it is gone: a direct message still reaches them.
    }
  }
  await args.client.chat.postMessage({ channel: user, text });
}

function channelOf(privateMetadata: string | undefined): string | undefined {
  try {
    const channel = (JSON.parse(privateMetadata ?? '') as { channel?: unknown }).channel;
    return typeof channel === 'string' && /^[CGD][A-Z0-9]+$/.test(channel) ? channel : undefined;
  } catch {
    return undefined;
  }
}
