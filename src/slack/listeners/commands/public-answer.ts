import type { AllMiddlewareArgs, RespondFn } from '@slack/bolt';
import { publicAnswerPlace } from '../../../domain/tenant-channels.js';
import { inShadow } from '../../../domain/shadow.js';
import type { SlackContext } from '../context.js';

/** A public answer's subject: the tenant whose workflow (or every workflow, for a tenant-wide window) it changed. */
export interface AnswerAbout {
  tenantId: string;
  workflowId?: number;
}

/**
 * Says a public `/scheduler` answer where `publicAnswerPlace` decides: in the
 * channel it was typed in, or posted in the tenant's channel with a private
 * confirmation to the typer naming it. Should the post fail (the bot was
 * removed from that channel), it is said where typed, as before.
 */
export async function sayPublicAnswer(ctx: SlackContext, at: { client: AllMiddlewareArgs['client']; respond: RespondFn; typedIn: string }, text: string, about: AnswerAbout | undefined): Promise<void> {
  const here = () => at.respond({ response_type: 'in_channel', text });
  if (!about) return void (await here());
  const tenant = await ctx.deps.db.selectFrom('tenants').select(['channel', 'shadow']).where('id', '=', about.tenantId).executeTakeFirst();
  const workflow = about.workflowId === undefined ? undefined : await ctx.deps.db.selectFrom('workflows').select('shadow').where('id', '=', about.workflowId).executeTakeFirst();
  const place = publicAnswerPlace({ typedIn: at.typedIn, tenantChannel: tenant?.channel ?? null, shadow: inShadow({ workflowShadow: !!workflow?.shadow, tenantShadow: !!tenant?.shadow }) });
  if (place.kind === 'here') return void (await here());
  try {
    await at.client.chat.postMessage({ channel: place.channel, text });
  } catch (error) {
    ctx.deps.logger.warn({ channel: place.channel, error: error instanceof Error ? error.message : String(error) }, "could not tell a tenant's channel of a /scheduler change: said where typed");
    return void (await here());
  }
  await at.respond({ response_type: 'ephemeral', text: `Told in <#${place.channel}>: ${text}` });
}
