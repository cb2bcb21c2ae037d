import { renewLease } from './claim-notifications.js';
import type { SenderContext } from './sender-context.js';
import type { Held } from './settle-notification.js';

/**
 * How long before a renewed lease ends a send still under way is cut off:
 * a fifth of the lease (12 s of the default minute), room for the cut-off
 * connection to close and for clocks a little apart across replicas.
 */
export const LEASE_MARGIN_FRACTION = 0.2;

/**
 * The `keepLease` a transport is handed for one claimed row (see
 * `DeliveryInput.keepLease`), and `end`, called once the transport has
 * answered, which drops the cut-off timers it started. Timed on the
 * sender's clock, as the lease is.
 */
export function leaseKeeper(ctx: SenderContext, held: Held): { keepLease: () => Promise<AbortSignal | undefined>; end: () => void } {
  const { deps, o } = ctx;
  const ended = new AbortController();
  const keepLease = async (): Promise<AbortSignal | undefined> => {
    const now = deps.clock.now();
    if (!(await renewLease(deps.db, held, new Date(now.getTime() + o.leaseMs)))) {
      ctx.log.warn({ id: held.id }, 'lease ran out before the send and another replica holds the row now; not sending');
      return undefined;
    }
    const cutOff = new AbortController();
    const budgetMs = Math.max(0, o.leaseMs * (1 - LEASE_MARGIN_FRACTION) - (deps.clock.now().getTime() - now.getTime()));
    void deps.clock.sleep(budgetMs, ended.signal).then(
      () => {
        if (!ended.signal.aborted) cutOff.abort(new Error(`send cut off ${Math.round(budgetMs / 1000)} s after its lease was renewed, before the lease ends`));
      },
      // A clock that cannot wait (the replay's: only its driver moves it, and a send takes no virtual time) sets no cut-off.
      () => {},
    );
    return cutOff.signal;
  };
  return { keepLease, end: () => ended.abort() };
}
