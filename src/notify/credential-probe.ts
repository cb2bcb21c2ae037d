import { sql } from 'kysely';
import { backoffMs, credentialScope, shownDestination, WORKSPACE_SCOPE, type OutagePolicy } from '../domain/destination-outage.js';
import type { Outage } from '../domain/destination-outage.js';
import { metrics } from '../metrics.js';
import { endOutages, notifyOutage } from './outage-notices.js';
import type { SenderContext } from './sender-context.js';
import { holdDestination } from './settle-notification.js';
import type { DeliveryInput } from './transport.js';

/** The sender's policy for refused credentials: told at once, probed at a back-off of its own. */
export function credentialPolicy(o: SenderContext['o']): OutagePolicy {
  return { baseBackoffMs: o.credentialBaseBackoffMs, maxBackoffMs: o.credentialMaxBackoffMs, noticeAfterMs: 0 };
}

/**
 * A delivery (or the lookup before one) met refused credentials: the row is
 * not dead. Its credential scope (the Slack workspace, or the destination
 * itself) is held, the row waits with every other row of that scope (due
 * again as it was: `pending`, or `sending` to be looked up first), and the
 * first refusal is told at once.
 */
export async function holdForCredentials(ctx: SenderContext, n: DeliveryInput['notification'], error: string, outcome: 'transient' | 'unknown', now: Date): Promise<void> {
  const scope = credentialScope(n.destination);
  const { outage, raiseNotice } = await holdDestination(ctx.deps.db, {
    row: { id: n.id, owner: ctx.deps.replicaId },
    destination: scope,
    error,
    outcome,
    now,
    policy: credentialPolicy(ctx.o),
    cause: 'credentials',
  });
  ctx.log.warn({ id: n.id, destination: shownDestination(n.destination), held: shownDestination(scope), error, failures: outage.failures, next: outage.heldUntil }, 'credentials refused; the row waits, not dead');
  if (raiseNotice) await notifyOutage(ctx, { kind: 'outage', destination: scope, outage, now });
}

/**
 * Probes each held credential scope of a kind whose transport can ask
 * (Slack: `auth.test`) once its back-off has run out, or at once on this
 * sender's first look. The claim never takes a row of a `<kind>:*` scope
 * while it is held, so this is the only way such a hold ends, short of a
 * delivery: one request per back-off, not one per channel. Taking the probe
 * is a compare-and-set that also moves the next probe on, so one replica
 * probes and a failed probe is already backed off.
 */
export async function probeCredentials(ctx: SenderContext, now: Date): Promise<void> {
  for (const transport of ctx.byKind.values()) {
    const scope = (WORKSPACE_SCOPE as Record<string, string>)[transport.kind];
    if (!scope || !transport.probeCredentials) continue;
    const taken = await takeProbe(ctx, scope, now, !ctx.probed.has(scope));
    ctx.probed.add(scope);
    if (!taken) continue;
    const probe = await transport.probeCredentials();
    metrics.deliveries.inc({ kind: transport.kind, result: probe.ok ? 'credentials_accepted' : 'credentials_probe_failed' });
    if (probe.ok) {
      const { rows } = await sql<Outage & { destination: string }>`
        delete from destination_outages where destination = ${scope} and cause = 'credentials' and failing_since = ${taken.failingSince}
        returning destination, failing_since, failures, held_until, last_error, noticed_at, cause
      `.execute(ctx.deps.db);
      await endOutages(ctx, rows, 'delivered', now);
      continue;
    }
    await ctx.deps.db.updateTable('destinationOutages').set({ lastError: probe.error }).where('destination', '=', scope).where('failingSince', '=', taken.failingSince).execute();
    ctx.log.warn({ destination: shownDestination(scope), error: probe.error, failingSince: taken.failingSince, probes: taken.failures, next: taken.heldUntil }, 'credentials still refused; its notifications stay held');
  }
}

async function takeProbe(ctx: SenderContext, scope: string, now: Date, first: boolean): Promise<Outage | undefined> {
  const db = ctx.deps.db;
  const held = await db.selectFrom('destinationOutages').selectAll().where('destination', '=', scope).where('cause', '=', 'credentials').executeTakeFirst();
  if (!held || (!first && new Date(held.heldUntil) > now)) return undefined;
  // `failures` counts refusals and probes alike: each probe backs the next one off further, up to the cap.
  const failures = held.failures + 1;
  const heldUntil = new Date(now.getTime() + backoffMs(failures, credentialPolicy(ctx.o)));
  const won = await db
    .updateTable('destinationOutages')
    .set({ failures, heldUntil })
    .where('destination', '=', scope)
    // The count is the row's version: a refusal or another replica's probe in between moves it, and this probe is theirs.
    .where('failures', '=', held.failures)
    .executeTakeFirst();
  return Number(won.numUpdatedRows) === 1 ? { ...held, failures, heldUntil } : undefined;
}
