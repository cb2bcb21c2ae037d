import { parseDestination } from '../domain/events.js';
import type { ClaimedNotification } from './claim-notifications.js';
import { deliverOne } from './deliver-one.js';
import { probeCredentials } from './credential-probe.js';
import { claimDue, handBackStranded, pacingOf, sleepOnClock, type SenderContext } from './sender-context.js';

/**
 * Keeps every destination with work busy at its pace until none has any:
 * each claimed destination gets a pipeline that delivers a row, claims
 * that destination's next head at once (with its delivery input) and then
 * waits on the clock for the pacing slot, so a channel's next message
 * leaves the moment Slack's pace allows rather than when the slowest of a
 * batch has settled. Meanwhile it looks for newly busy destinations every
 * `lookMs`, whenever a pipeline ends and when the loop is woken (rows were
 * just written: `lookNow`). Rows held in process past a
 * replica's death are not lost: their lease runs out and the next claimer
 * looks them up before sending again. On `signal` the pipelines finish the
 * row in hand and hand back the ones still waiting for a slot. A drain
 * lasts as long as the backlog (minutes for a storm), so every claim and
 * settled delivery tells the runner it is `progress`ing.
 */
export async function drainOutbox(ctx: SenderContext, signal: AbortSignal, progress: () => void = () => {}): Promise<boolean> {
  const { deps, o, pacer } = ctx;
  const failed = new AbortController();
  const halt = AbortSignal.any([signal, failed.signal]);
  const running = new Map<string, Promise<void>>();
  const failures: unknown[] = [];
  let ended = new AbortController();
  let found = false;
  ctx.awake.count++;
  // A wake-up (new rows) while pipelines run: look now rather than after `lookMs`.
  ctx.lookNow = () => ended.abort();
  try {
    await handBackStranded(ctx);
    while (!halt.aborted) {
      ended = new AbortController();
      const now = deps.clock.now();
      await probeCredentials(ctx, now);
      // Destinations paced beyond what a pipeline waits out in process are left for later looks.
      const exclude = [...running.keys(), ...pacer.blockedDestinations(new Date(now.getTime() + o.holdMs))];
      const claimed = await claimDue(ctx, now, o.batch, exclude);
      progress();
      for (const c of claimed) {
        found = true;
        const done = runPipeline(ctx, c, halt, progress)
          .catch((error: unknown) => {
            failures.push(error);
            failed.abort();
          })
          .finally(() => {
            running.delete(c.destination);
            ended.abort();
          });
        running.set(c.destination, done);
      }
      if (running.size === 0) break;
      await sleepOnClock(ctx, o.lookMs, AbortSignal.any([halt, ended.signal]));
    }
  } catch (error) {
    failures.push(error);
    failed.abort();
  } finally {
    ctx.lookNow = () => {};
    ctx.awake.count--;
    await Promise.all(running.values());
  }
  // Every pipeline has settled or handed its row back; the runner logs this and backs off.
  if (failures.length > 0) throw failures[0];
  return found;
}

/** One destination's pipeline: delivers its head, then claims and delivers the next, while its pace is within reach. */
async function runPipeline(ctx: SenderContext, first: ClaimedNotification, halt: AbortSignal, progress: () => void): Promise<void> {
  const { deps, o } = ctx;
  ctx.awake.count++;
  try {
    for (let next: ClaimedNotification | undefined = first; next && !halt.aborted; ) {
      const delivered = await deliverOne(ctx, next, halt);
      progress();
      if (!delivered || halt.aborted) return;
      if (heldPast(ctx, next.destination, new Date(deps.clock.now().getTime() + o.holdMs))) return;
      [next] = await claimDue(ctx, deps.clock.now(), 1, [], [next.destination]);
    }
  } finally {
    ctx.awake.count--;
  }
}

function heldPast(ctx: SenderContext, destination: string, at: Date): boolean {
  const pacing = pacingOf(ctx.byKind.get(parseDestination(destination).kind)!);
  const readyAt = pacing && ctx.pacer.readyAt(pacing.key(destination));
  return !!readyAt && readyAt > at;
}
