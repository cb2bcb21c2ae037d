import { describe, expect, it } from 'vitest';
import { bundledReplay } from './bundled-replay.js';
import { eventOf, storyByChannel, threadsOf, workflowOf } from './transcript-shape.js';

/**
 * Every bundled scenario through the real engine, asserting the shape of its
 * transcript (roots, replies, the events in their metadata, when they came),
 * never its wording.
 */

const { replay, db } = bundledReplay();

const at = (iso: string) => new Date(iso).getTime();
const time = (c: { at: string }) => new Date(c.at).getTime();

describe('bundled scenarios', { timeout: 120_000 }, () => {
  it('the transient night says nothing at all', async () => {
    const { transcript } = await replay('seed-transient-night.json');
    expect(transcript.calls).toEqual([]);
    // The check's one failure at 02:05 is the only failed tick: the nightly's failed first attempt was recovered by its retry.
    expect(transcript.summary).toEqual({ alerts: 0, roots: 0, replies: 0, updates: 0, failedTicks: 1 });
    const nightly = await db()
      .selectFrom('runs')
      .innerJoin('workflows', 'workflows.id', 'runs.workflowId')
      .select(['runs.attempt', 'runs.status', 'runs.attemptStatus', 'runs.outcomeNote'])
      .where('workflows.name', '=', 'nightly-pipeline')
      .orderBy('runs.attempt')
      .execute();
    expect(nightly).toEqual([
      { attempt: 1, status: 'succeeded', attemptStatus: 'failed', outcomeNote: 'recovered on attempt 2' },
      { attempt: 2, status: 'succeeded', attemptStatus: 'succeeded', outcomeNote: null },
    ]);
  });

  it('the genuine-defect night: two alerts, one thread per alert per channel, the escalation in its own thread, recovery after the 09:00 run', async () => {
    const { transcript } = await replay('seed-genuine-defect-night.json');
    expect(transcript.summary).toMatchObject({ alerts: 2, roots: 4, replies: 18, failedTicks: 85 });
    const threads = threadsOf(transcript.calls);
    // Escalated and nobody took it: the on-call is paged again, backing off (30 min, 30 min, 1 h, 2 h), until the 09:00 recovery.
    const paged = ['opened', 'escalated', 'reminder', 'reminder', 'reminder', 'reminder', 'resolved'];
    expect(storyByChannel(threads)).toEqual({
      CACME: { 'nightly-pipeline': [['opened', 'run_requested', 'run_finished', 'resolved']], 'quality-check': [paged] },
      CPLATFORM: { 'nightly-pipeline': [['opened', 'run_requested', 'run_finished', 'resolved']], 'quality-check': [paged] },
    });
    // One alert per workflow, the same alert in both channels.
    const alertsBy = (wf: string) => new Set(threads.filter((th) => th.workflow === wf).map((th) => th.alertId));
    expect(alertsBy('nightly-pipeline').size).toBe(1);
    expect(alertsBy('quality-check').size).toBe(1);
    expect([...alertsBy('nightly-pipeline')][0]).not.toBe([...alertsBy('quality-check')][0]);

    for (const th of threads) {
      const opened = time(th.root);
      if (th.workflow === 'nightly-pipeline') {
        // All four attempts (three minutes each) fail: critical as soon as the last one ends.
        expect(th.root.at).toBe('2026-03-10T02:12:00.000Z');
        expect((th.root.metadata as { event_payload: { severity: string } }).event_payload.severity).toBe('critical');
      } else {
        // The third confirmed failure (02:15's run, ending 02:16) opens a warning; it escalates as it keeps failing.
        expect(th.root.at).toBe('2026-03-10T02:16:00.000Z');
        expect((th.root.metadata as { event_payload: { severity: string } }).event_payload.severity).toBe('warning');
        const escalated = th.replies.find((r) => eventOf(r) === 'escalated')!;
        expect(escalated.thread_ts).toBe(th.rootTs);
        expect(workflowOf(escalated)).toBe('quality-check');
        expect(time(escalated)).toBeGreaterThan(opened);
        expect(time(escalated)).toBeLessThan(at('2026-03-10T03:00:00Z'));
      }
      const resolved = th.replies.find((r) => eventOf(r) === 'resolved')!;
      expect(time(resolved)).toBeGreaterThanOrEqual(at('2026-03-10T09:00:00Z'));
      // Root re-renders are in place: the root is updated, never re-posted.
      expect(th.updates.length).toBeGreaterThan(0);
      expect(th.updates.at(-1)!.text).toMatch(/Resolved/);
    }
    // Nothing before the first failure could have been confirmed, and nothing after the last message.
    expect(transcript.calls.every((c) => time(c) >= at('2026-03-10T02:12:00Z') && time(c) <= at('2026-03-10T09:30:00Z'))).toBe(true);
  });

  it('a flapping job with recoverAfter: 3 stays one alert through its flaps; ownership stops the escalation', async () => {
    const { transcript, actions } = await replay('flapping-job.json');
    expect(actions.map((a) => [a.action, a.result])).toEqual([['take_ownership', 'ok']]);
    expect(transcript.summary).toMatchObject({ alerts: 1, roots: 2, failedTicks: 6 });
    const story = storyByChannel(threadsOf(transcript.calls));
    // The flaps are told once, as a note in the thread (issue 8), not as replies or alerts per flip.
    // The owner is reminded once while it keeps failing (issue 13: a 5-minute job reminds after 30 minutes).
    for (const channel of ['CACME', 'CPLATFORM']) expect(story[channel]).toEqual({ 'orders-sync': [['opened', 'flapping', 'owner_changed', 'reminder', 'resolved']] });
    const resolved = transcript.calls.filter((c) => c.method === 'chat.postMessage' && eventOf(c) === 'resolved');
    // Three successes in a row are 02:50, 02:55 and 03:00 (02:45 failed): it resolves when the third ends, not at the first.
    expect(resolved.map((c) => c.at)).toEqual(['2026-03-10T03:01:00.000Z', '2026-03-10T03:01:00.000Z']);
    const alert = await db().selectFrom('alerts').selectAll().executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ severity: 'warning', escalatedAt: null, acknowledgedBy: 'U_ENG' });
  });

  it('a silence holds the escalation and new failures; its end tells them in one reply; the recovery is told', async () => {
    const { transcript, actions } = await replay('silence-during-incident.json');
    expect(actions.map((a) => [a.action, a.channel, a.result])).toEqual([['silence', 'CPLATFORM', 'ok']]);
    const story = storyByChannel(threadsOf(transcript.calls));
    // Its end finds it critical and unowned: the on-call is paged again right after the summary.
    for (const channel of ['CGLOBEX', 'CPLATFORM']) expect(story[channel]).toEqual({ 'inventory-check': [['opened', 'silenced', 'unsilenced', 'reminder', 'resolved']] });
    const unsilenced = transcript.calls.filter((c) => c.method === 'chat.postMessage' && eventOf(c) === 'unsilenced');
    expect(unsilenced.map((c) => c.at)).toEqual(['2026-03-10T03:15:00.000Z', '2026-03-10T03:15:00.000Z']);
    // The escalation happened while silenced: recorded, not posted, and summed up by the unsilenced event.
    const events = await db().selectFrom('alertEvents').select(['kind', 'data']).orderBy('id').execute();
    expect(events.map((e) => e.kind)).toContain('escalated');
    const summary = (events.find((e) => e.kind === 'unsilenced')!.data as { summary: { escalated: boolean } }).summary;
    expect(summary.escalated).toBe(true);
    const held = await db().selectFrom('notifications').innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId').select(['alertEvents.kind', 'notifications.status']).where('alertEvents.kind', '=', 'escalated').execute();
    expect(held.map((n) => n.status)).toEqual(['skipped', 'skipped']);
  });

  it('a missed-run night: ticks nobody reported become missed rows that open alerts, which resolve on the next report', async () => {
    const { transcript } = await replay('missed-run-night.json');
    expect(transcript.summary).toMatchObject({ alerts: 2, roots: 4, failedTicks: 6 });
    const story = storyByChannel(threadsOf(transcript.calls));
    for (const channel of ['CACME', 'CPLATFORM']) {
      expect(story[channel]).toEqual({ heartbeat: [['opened', 'resolved']], 'warehouse-import': [['opened', 'resolved']] });
    }
    const missed = await db().selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select(['workflows.name', 'runs.tick']).where('runs.status', '=', 'missed').orderBy('runs.tick').execute();
    expect(missed.map((r) => `${r.name} ${r.tick!.toISOString().slice(11, 16)}`)).toEqual([
      'warehouse-import 02:00',
      'heartbeat 02:30',
      'heartbeat 02:35',
      'heartbeat 02:40',
      'warehouse-import 03:00',
      'warehouse-import 04:00',
    ]);
    // Five-minute cadence: three missed ticks open the alert once the third's grace (a minute) has passed.
    const heartbeatRoot = transcript.calls.find((c) => c.thread_ts === null && workflowOf(c) === 'heartbeat')!;
    expect(heartbeatRoot.at).toBe('2026-03-10T02:41:00.000Z');
    const opened = await db().selectFrom('alertEvents').select('data').where('kind', '=', 'opened').execute();
    expect(opened.map((e) => (e.data as { missed: boolean }).missed)).toEqual([true, true]);
  });

  it('a DST night in Europe/Berlin: the 02:30 job fires once, at 03:30 CEST, and its threads open and close', async () => {
    const { transcript, actions } = await replay('dst-night-berlin.json');
    expect(actions.map((a) => a.result)).toEqual(['started']);
    const ticks = await db().selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select(['runs.tick']).where('workflows.name', '=', 'nightly-report').where('runs.originalRunId', 'is', null).where('runs.tick', 'is not', null).execute();
    expect(ticks.map((r) => r.tick!.toISOString())).toEqual(['2026-03-29T01:30:00.000Z']);
    const story = storyByChannel(threadsOf(transcript.calls));
    for (const channel of ['CHANSA', 'CPLATFORM']) {
      expect(story[channel]).toEqual({
        'nightly-report': [['opened', 'run_requested', 'run_finished', 'resolved']],
        'hourly-sync': [['opened', 'resolved']],
      });
    }
    const root = (wf: string) => transcript.calls.find((c) => c.thread_ts === null && workflowOf(c) === wf)!;
    // 01:30 UTC plus four failed attempts of two minutes each.
    expect(root('nightly-report').at).toBe('2026-03-29T01:38:00.000Z');
    // 03:00 and 04:00 CEST (01:00 and 02:00 UTC, an hour apart across the jump) fail: two confirmed failures open it.
    expect(root('hourly-sync').at).toBe('2026-03-29T02:03:00.000Z');
  });
  it('an upstream warehouse night: one alert, one "also affected" reply per channel naming the 12, edited in place, no downstream alert, quiet after the recovery', async () => {
    const { transcript } = await replay('upstream-warehouse-night.json');
    expect(transcript.summary).toMatchObject({ alerts: 1, roots: 2, failedTicks: 25 });
    const threads = threadsOf(transcript.calls);
    const story = storyByChannel(threads);
    for (const channel of ['CACME', 'CPLATFORM']) expect(story[channel]).toEqual({ 'warehouse-load': [['opened', 'upstream_affected', 'run_requested', 'run_finished', 'resolved']] });
    for (const th of threads) {
      const reply = th.replies.find((r) => eventOf(r) === 'upstream_affected')!;
      // Told once, then edited as each of the other eleven was hit: the last edit names all twelve.
      expect(th.edits).toHaveLength(11);
      expect(th.edits.every((e) => e.ts === reply.ts)).toBe(true);
      const last = th.edits.at(-1)!.text;
      for (const wf of ['orders-mart', 'customers-mart', 'finance-ledger', 'exec-dashboard']) expect(last).toContain(wf);
      expect(last).toMatch(/12 downstream workflows/);
      expect(time(th.edits.at(-1)!)).toBeLessThan(at('2026-03-10T03:00:00Z'));
    }
    // Every downstream failure is recorded against its own workflow, counted once per tick.
    const blocks = await db().selectFrom('upstreamBlocks').select(['failures', 'missed']).execute();
    expect(blocks).toHaveLength(12);
    expect(blocks.every((b) => b.failures === 2 && b.missed === 0)).toBe(true);
    // Nothing after the upstream's recovery (04:01): the downstream jobs pass on their next runs.
    expect(transcript.calls.every((c) => time(c) <= at('2026-03-10T04:02:00Z'))).toBe(true);
  });

  it('the same night where one downstream keeps failing: it opens its own alert after its own threshold, counted from the recovery, saying it outlived the upstream', async () => {
    const { transcript } = await replay('upstream-outlived.json');
    expect(transcript.summary).toMatchObject({ alerts: 2, roots: 4 });
    const threads = threadsOf(transcript.calls);
    const story = storyByChannel(threads);
    for (const channel of ['CACME', 'CPLATFORM']) {
      expect(story[channel]).toEqual({
        'warehouse-load': [['opened', 'upstream_affected', 'run_requested', 'run_finished', 'resolved']],
        'finance-ledger': [['opened', 'outlived_upstream']],
      });
    }
    // Hourly: two failures alert. 02:34 and 03:34 were held back; 04:34 and 05:34 count (retries end at 05:37).
    for (const th of threads.filter((x) => x.workflow === 'finance-ledger')) {
      expect(th.root.at).toBe('2026-03-10T05:37:00.000Z');
      const outlived = th.replies.find((r) => eventOf(r) === 'outlived_upstream')!;
      // The reply links to the warehouse thread in the same channel.
      const upstreamRoot = threads.find((x) => x.workflow === 'warehouse-load' && x.channel === th.channel)!.rootTs;
      expect(JSON.stringify(outlived.blocks)).toContain(`https://slack.com/archives/${th.channel}/p${upstreamRoot.replace('.', '')}`);
    }
    const alerts = await db().selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select(['workflows.name', 'alerts.id', 'alerts.upstreamAlertId', 'alerts.consecutiveFailures']).orderBy('alerts.id').execute();
    expect(alerts[1]).toMatchObject({ name: 'finance-ledger', upstreamAlertId: alerts[0]!.id, consecutiveFailures: 2 });
  });

  it('50 unrelated workflows failing at one tick: one storm message per channel, each alert ownable, a handful of posts; the one that outlives the storm gets its own thread', async () => {
    const { transcript, actions } = await replay('storm-50-workflows.json');
    expect(actions.map((a) => a.result)).toEqual(['ok']);
    expect(transcript.summary).toMatchObject({ alerts: 50 });
    const story = storyByChannel(threadsOf(transcript.calls));
    const posts = (channel: string) => transcript.calls.filter((c) => c.method === 'chat.postMessage' && c.channel === channel);
    for (const channel of ['CACME', 'CPLATFORM']) {
      const roots = posts(channel).filter((c) => c.thread_ts === null);
      // The storm message first, then load-13's own root once the storm ended (49 recovered at 03:00).
      expect(roots.map(eventOf)).toEqual(['storm', 'storm_outlived']);
      expect(posts(channel).length).toBeLessThanOrEqual(5);
      // Its own thread from then on: the root, the reply saying it outlived the storm, its escalation.
      expect(story[channel]!['load-13']).toEqual([['storm_outlived', 'storm_outlived', 'escalated']]);
    }
    // The shared cause: told once, on the platform channel only, in the storm's thread and broadcast.
    const stormThread = (channel: string) => threadsOf(transcript.calls).find((th) => th.channel === channel && th.events[0] === 'storm')!;
    expect(stormThread('CPLATFORM').replies.map(eventOf)).toEqual(['shared_cause']);
    expect(stormThread('CACME').replies).toEqual([]);
    // Updated in place as alerts opened, were owned and resolved: chat.update, never a post per alert.
    expect(stormThread('CACME').updates.length).toBeGreaterThan(0);
    const owned = await db().selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select(['alerts.ownerUser']).where('workflows.name', '=', 'load-07').executeTakeFirstOrThrow();
    expect(owned.ownerUser).toBe('U_ENG');
    const storms = await db().selectFrom('storms').select(['destination', 'endedAt']).orderBy('destination').execute();
    expect(storms.map((s) => [s.destination, s.endedAt !== null])).toEqual([
      ['slack:CACME', true],
      ['slack:CPLATFORM', true],
    ]);
  });
});
