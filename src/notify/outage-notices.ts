import { outageEndNotice, shownDestination } from '../domain/destination-outage.js';
import { parseDestination } from '../domain/events.js';
import { metrics } from '../metrics.js';
import type { OutageNotice, SenderContext } from './sender-context.js';
import { noteRefusal, type EndedOutage } from './settle-notification.js';

/**
 * Outages `markSent`, `markDead` or a credential probe just ended (a
 * destination's own, and a credential outage of its scope): each told as
 * src/domain/destination-outage.ts decides. A refusal's notice carries the
 * refusing answer as its last error.
 */
export async function endOutages(ctx: SenderContext, ended: EndedOutage[], how: 'delivered' | 'refused', now: Date, answer?: string): Promise<boolean> {
  let told = false;
  for (const outage of ended) {
    const kind = outageEndNotice(outage, how);
    if (!kind) {
      ctx.log.info({ destination: shownDestination(outage.destination), failingSince: outage.failingSince, failures: outage.failures, how }, 'destination answered again; its outage is over');
      continue;
    }
    const { destination, ...rest } = outage;
    await notifyOutage(ctx, { kind, destination, outage: answer === undefined || kind === 'recovered' ? rest : { ...rest, lastError: answer }, now });
    told = true;
  }
  return told;
}

/**
 * A notification its destination refused for good (it is dead): counted
 * against the destination, and the platform told the first time and then at
 * most once a day while it keeps refusing (`refusalNoticeDue`), unless
 * the end of a noticed outage has just told the same answer (`alreadyTold`).
 * A delivery to it starts the count again.
 */
export async function tellRefusal(ctx: SenderContext, destination: string, error: string, now: Date, alreadyTold: boolean): Promise<void> {
  const refusal = await noteRefusal(ctx.deps.db, destination, error, now);
  if (!refusal.tell || alreadyTold) return;
  const outage = { failingSince: refusal.firstRefusedAt, failures: refusal.refusals, heldUntil: now, lastError: error, noticedAt: now, cause: 'unreachable' as const };
  await notifyOutage(ctx, { kind: 'dead', destination, outage, now });
}

const NOTICE_RESULT = { outage: 'outage_notice', recovered: 'outage_recovered', refused: 'outage_refused', dead: 'refusal_notice' } as const;

/** The notice of an outage (or its end): an error (or warning) line, the counter, and the platform's own notice (`onOutage`). */
export async function notifyOutage(ctx: SenderContext, notice: OutageNotice): Promise<void> {
  const { destination, outage } = notice;
  const logCtx = { destination: shownDestination(destination), cause: outage.cause, failingSince: outage.failingSince, failures: outage.failures, lastError: outage.lastError };
  if (notice.kind === 'outage' && outage.cause === 'credentials') {
    ctx.log.error(
      logCtx,
      `the receiver refuses the bot's credentials (${outage.lastError}): every notification for ${shownDestination(destination)} is held, in order, and goes out once they work again (a new token or secret and a restart, or the old one re-enabled); nothing is dropped`,
    );
  } else if (notice.kind === 'outage') ctx.log.error(logCtx, 'destination failing for longer than the notice threshold; its notifications are held and will be delivered in order');
  else if (notice.kind === 'recovered') ctx.log.warn(logCtx, 'destination recovered; held notifications are being delivered');
  else if (notice.kind === 'refused') ctx.log.error(logCtx, 'destination answered again but refused for good; its outage is over, and notifications it refuses go dead');
  else ctx.log.error(logCtx, 'destination refuses notifications for good; they go dead (told again in a day if it keeps refusing)');
  metrics.deliveries.inc({ kind: parseDestination(destination).kind, result: NOTICE_RESULT[notice.kind] });
  // The log line and the counter above are the notice of record; a platform
  // channel that cannot be reached must not turn into a failed delivery.
  await ctx.o.onOutage?.(notice).catch((err: unknown) => ctx.log.warn({ ...logCtx, err }, 'could not post the outage notice to the platform channel'));
}
