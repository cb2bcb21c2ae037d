import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Insertable } from 'kysely';
import type { AlertsTable } from '../../src/db/schema.js';
import { DIGEST_ATTEMPTS, DIGEST_STALE_MS } from '../../src/domain/housekeeping-health.js';
import { ManualClock } from '../../src/clock.js';
import { createHousekeeping } from '../../src/engine/housekeeping.js';
import { silentLogger } from '../../src/log.js';
import { silence, unsilence } from '../../src/ledger/alert-actions.js';
import { loadDigestFacts } from '../../src/services/digest-queries.js';
import { buildDigest, median } from '../../src/slack/blocks/digest.js';
import { digestJob, digestPeriod } from '../../src/slack/views/digest.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { digestMailer } from '../../src/notify/digest-mail.js';
import { SmtpSink } from '../destinations/smtp-sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';

// Acme's digest: 09:00 in Berlin (08:00 UTC in March), covering the night before.
const DIGEST = { cron: '0 9 * * *', timezone: 'Europe/Berlin' };
const FIRE = at('2026-03-10T08:00:00Z');
const SINCE = at('2026-03-09T08:00:00Z');

let t: TestDatabase;
let rig: SlackRig;

async function alert(workflowId: number, generation: number, v: Partial<Insertable<AlertsTable>>) {
  await t.db
    .insertInto('alerts')
    .values({ workflowId, generation, status: 'resolved', severity: 'warning', openedAt: SINCE, cadenceSeconds: 300, policy: '{}', consecutiveFailures: 3, updatedAt: SINCE, ...v })
    .execute();
}

async function failedRuns(workflowId: number, count: number, status: 'failed' | 'missed' = 'failed', inMaintenance = false, fromMinute = 0) {
  for (let i = 0; i < count; i++) {
    const finishedAt = new Date(at('2026-03-10T00:00:00Z').getTime() + (fromMinute + i + 1) * 60_000 + workflowId * 1000);
    await makeRun(t.db, { workflowId, tick: finishedAt, status, startedAt: finishedAt, finishedAt, error: 'boom', inMaintenance });
  }
}

/** A night with incidents for acme; a quiet one for globex (its only alert is from last week). */
async function seedNight() {
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME', digest: JSON.stringify(DIGEST) });
  await makeTenant(t.db, { id: 'globex', name: 'Globex', channel: 'CGLOBEX', digest: JSON.stringify(DIGEST) });
  const etl = await makeWorkflow(t.db, { name: 'nightly-etl' });
  const billing = await makeWorkflow(t.db, { name: 'billing-sync' });
  const reports = await makeWorkflow(t.db, { name: 'reports' });
  const quiet = await makeWorkflow(t.db, { tenantId: 'globex', name: 'ledger-export' });
  await alert(etl.id, 1, { status: 'open', severity: 'critical', openedAt: at('2026-03-10T03:00:00Z'), ownerUser: 'U0BOB' });
  await alert(billing.id, 1, { openedAt: at('2026-03-09T22:00:00Z'), resolvedAt: at('2026-03-09T23:30:00Z'), flappingSince: at('2026-03-09T22:30:00Z') });
  await alert(reports.id, 1, { openedAt: at('2026-03-10T01:00:00Z'), resolvedAt: at('2026-03-10T01:30:00Z'), silencedUntil: at('2026-03-10T12:00:00Z'), silencedBy: 'U0ALICE', silenceReason: 'known vendor outage' });
  // Its silence as the bot records one: the columns and a `silenced` event (the digest reads the events).
  const silenced = await t.db.selectFrom('alerts').select('id').where('workflowId', '=', reports.id).where('generation', '=', 1).executeTakeFirstOrThrow();
  await t.db
    .insertInto('alertEvents')
    .values({ alertId: silenced.id, kind: 'silenced', actor: 'U0ALICE', at: at('2026-03-10T01:10:00Z'), data: JSON.stringify({ until: '2026-03-10T12:00:00.000Z', reason: 'known vendor outage' }) })
    .execute();
  await alert(reports.id, 0, { openedAt: at('2026-03-01T01:00:00Z'), resolvedAt: at('2026-03-01T02:00:00Z') });
  await alert(quiet.id, 1, { openedAt: at('2026-03-03T01:00:00Z'), resolvedAt: at('2026-03-03T02:00:00Z') });
  await failedRuns(etl.id, 4);
  await failedRuns(billing.id, 2);
  await failedRuns(reports.id, 1, 'missed');
  await failedRuns(reports.id, 3, 'failed', true, 10);
  await makeRun(t.db, { workflowId: quiet.id, tick: at('2026-03-10T01:00:00Z'), startedAt: at('2026-03-10T01:00:00Z'), finishedAt: at('2026-03-10T01:01:00Z') });
  await t.db
    .insertInto('maintenanceWindows')
    .values({ tenantId: 'acme', workflowId: null, startsAt: at('2026-03-10T00:00:00Z'), endsAt: at('2026-03-10T01:00:00Z'), reason: 'db upgrade', createdBy: 'U0OPS', recurrence: null, toldAt: null, createdAt: SINCE })
    .execute();
}

beforeEach(async () => {
  t = await createTestDatabase();
  await seedNight();
  rig = await startSlackRig(t.db, { start: FIRE });
});
afterEach(async () => {
  await rig?.close();
  await t.drop();
});

describe('the digest', () => {
  it('covers the period since the previous fire time, and the median of an even count is the mean of the middle two', () => {
    expect(digestPeriod(DIGEST, FIRE)).toEqual({ since: SINCE, until: FIRE });
    expect(digestPeriod({ cron: '0 9 * * 1', timezone: 'UTC' }, at('2026-03-16T09:00:00Z')).since).toEqual(at('2026-03-09T09:00:00Z'));
    expect(median([90, 30, 10, 1000])).toBe(60);
    expect(median([])).toBeUndefined();
  });

  it('for a night with incidents says what is broken, flapped, noisiest, opened and resolved, silenced or in maintenance', async () => {
    const facts = (await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!;
    expect(facts.open).toEqual([expect.objectContaining({ workflow: 'nightly-etl', severity: 'critical', owner: 'U0BOB' })]);
    expect(facts.flapped).toEqual([{ workflow: 'billing-sync', since: at('2026-03-09T22:30:00Z'), open: false }]);
    // Ticks in maintenance are not held against a workflow: reports' three failures there are left out.
    expect(facts.noisiest).toEqual([{ workflow: 'nightly-etl', failed: 4 }, { workflow: 'billing-sync', failed: 2 }, { workflow: 'reports', failed: 1 }]);
    expect(facts.opened).toBe(3);
    expect(facts.resolvedMs.sort((a, b) => a - b)).toEqual([30 * 60_000, 90 * 60_000]);
    // Silenced until noon, it ended when the alert resolved at 01:30.
    expect(facts.silenced).toEqual([{ workflow: 'reports', from: at('2026-03-10T01:10:00Z'), until: at('2026-03-10T12:00:00Z'), endedAt: at('2026-03-10T01:30:00Z'), by: 'U0ALICE', reason: 'known vendor outage' }]);
    expect(facts.maintenance).toEqual([{ workflow: null, startsAt: at('2026-03-10T00:00:00Z'), endsAt: at('2026-03-10T01:00:00Z'), reason: 'db upgrade' }]);

    const digest = buildDigest(facts)!;
    expect(digest.plainText).toContain('nightly-etl: critical, open 5 hours, owned by U0BOB');
    expect(digest.plainText).toContain('3 alerts opened, 2 resolved (median time to resolve 1 hour)');
    expect(digest.plainText).toMatchSnapshot('plain text');
    expect(digest.text).toMatchSnapshot('fallback text');
    expect(digest.blocks).toMatchSnapshot('blocks');
  });

  it('lists a silence that ended during the period (unsilenced, expired, replaced), from the alert events, not only one still recorded', async () => {
    const etl = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.id').where('workflows.name', '=', 'nightly-etl').executeTakeFirstOrThrow();
    const carol = { user: 'U0CAROL' };
    const scope = { tenantId: 'acme' };
    const clock = new ManualClock(at('2026-03-10T04:00:00Z')); // the night, before the digest's fire time
    const deps = { ...rig.deps, clock };
    await silence(deps, { alertId: etl.id, actor: carol, scope, until: at('2026-03-10T05:00:00Z'), reason: 'rolling back' });
    clock.set(at('2026-03-10T04:20:00Z'));
    await unsilence(deps, { alertId: etl.id, actor: carol, scope });
    clock.set(at('2026-03-10T05:00:00Z'));
    await silence(deps, { alertId: etl.id, actor: carol, scope, until: at('2026-03-10T05:30:00Z'), reason: 'short one' }); // lapses by itself
    clock.set(at('2026-03-10T06:00:00Z'));
    await silence(deps, { alertId: etl.id, actor: carol, scope, until: at('2026-03-10T07:00:00Z'), reason: 'first try' });
    clock.set(at('2026-03-10T06:30:00Z'));
    await silence(deps, { alertId: etl.id, actor: { user: 'U0DAVE' }, scope, until: 'resolved', reason: 'vendor ticket open' });

    const facts = (await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!;
    const etlSilences = facts.silenced.filter((x) => x.workflow === 'nightly-etl');
    expect(etlSilences).toEqual([
      { workflow: 'nightly-etl', from: at('2026-03-10T04:00:00Z'), until: at('2026-03-10T05:00:00Z'), endedAt: at('2026-03-10T04:20:00Z'), by: 'U0CAROL', reason: 'rolling back' },
      { workflow: 'nightly-etl', from: at('2026-03-10T05:00:00Z'), until: at('2026-03-10T05:30:00Z'), endedAt: at('2026-03-10T05:30:00Z'), by: 'U0CAROL', reason: 'short one' },
      { workflow: 'nightly-etl', from: at('2026-03-10T06:00:00Z'), until: at('2026-03-10T07:00:00Z'), endedAt: at('2026-03-10T06:30:00Z'), by: 'U0CAROL', reason: 'first try' },
      { workflow: 'nightly-etl', from: at('2026-03-10T06:30:00Z'), until: null, endedAt: null, by: 'U0DAVE', reason: 'vendor ticket open' },
    ]);
    // A silence that ended before the period is not listed.
    const tomorrow = (await loadDigestFacts(t.db, 'acme', new Date(FIRE.getTime() + 86_400_000), new Date(FIRE.getTime() + 2 * 86_400_000)))!;
    expect(tomorrow.silenced.map((x) => x.reason)).toEqual(['vendor ticket open']);
    const plainText = buildDigest(facts)!.plainText;
    expect(plainText).toContain('nightly-etl: silenced 2026-03-10 05:00 to 05:20 Europe/Berlin: rolling back');
    expect(plainText).toContain('nightly-etl: silenced until resolved: vendor ticket open');
  });

  it("shows its times in the tenant's digest time zone, and says which (the on-demand digest too; UTC without a schedule)", async () => {
    const facts = (await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!;
    expect(facts.timeZone).toBe('Europe/Berlin');
    const digest = buildDigest(facts)!;
    // 09:00 in Berlin is 08:00 UTC in March; the flap at 22:30 UTC was 23:30 there.
    expect(digest.subject).toBe('Digest for Acme, 1 day to 2026-03-10 09:00 Europe/Berlin');
    expect(digest.plainText).toContain('billing-sync: flapping since 2026-03-09 23:30 Europe/Berlin, since resolved');
    expect(digest.plainText).toContain('Whole tenant: maintenance 2026-03-10 01:00 to 02:00 Europe/Berlin: db upgrade');
    expect(digest.plainText).not.toContain('UTC');
    await t.db.updateTable('tenants').set({ digest: null }).where('id', '=', 'acme').execute();
    const onDemand = (await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!;
    expect(onDemand.timeZone).toBe('UTC');
    expect(buildDigest(onDemand)!.subject).toBe('Digest for Acme, 1 day to 2026-03-10 08:00 UTC');
  });

  it('escapes names, reasons and the tenant once: shown as typed, never mentioning or linking', () => {
    const facts = {
      tenant: { id: 'acme', name: 'Acme <!here> & co' },
      since: SINCE,
      until: FIRE,
      open: [{ workflow: 'etl <!channel> & <@U0EVIL>', severity: 'critical' as const, openedAt: SINCE, owner: null, silencedUntil: null, silencedBy: null }],
      flapped: [],
      noisiest: [],
      opened: 0,
      resolvedMs: [],
      silenced: [{ workflow: 'a&b', from: SINCE, until: null, endedAt: null, by: 'U0ALICE', reason: 'vendor <https://evil.example|status> & co' }],
      maintenance: [],
    };
    const digest = buildDigest(facts)!;
    const shown = JSON.stringify(digest.blocks);
    expect(shown).toContain('*etl &lt;!channel&gt; &amp; &lt;@U0EVIL&gt;*');
    expect(shown).toContain('*a&amp;b*: silenced until resolved: vendor &lt;https://evil.example|status&gt; &amp; co');
    expect(shown).not.toContain('&amp;amp;');
    expect(shown).not.toContain('&amp;lt;');
    // The notification text is parsed by Slack too.
    expect(digest.text).toMatch(/^Digest for Acme &lt;!here&gt; &amp; co, /);
    // Headers are plain text: shown as typed, nothing to escape.
    expect(digest.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text', text: expect.stringMatching(/^Digest for Acme <!here> & co, /) } });
  });

  it('a night of hundreds of alerts stays within 50 blocks, every section still shown, each long list ending with how many it left out', () => {
    const open = Array.from({ length: 500 }, (_, i) => ({ workflow: `load-${i}`, severity: 'warning' as const, openedAt: SINCE, owner: null, silencedUntil: null, silencedBy: null }));
    const facts = {
      tenant: { id: 'acme', name: 'Acme' },
      since: SINCE,
      until: FIRE,
      open,
      flapped: [],
      noisiest: [{ workflow: 'load-0', failed: 3 }],
      opened: 500,
      resolvedMs: [],
      silenced: Array.from({ length: 300 }, (_, i) => ({ workflow: `load-${i}`, from: SINCE, until: null, endedAt: null, by: 'U0ALICE', reason: 'warehouse' })),
      maintenance: [],
      storms: [{ startedAt: SINCE, endedAt: null, alerts: 500 }],
    };
    const digest = buildDigest(facts)!;
    expect(digest.blocks.length).toBeLessThanOrEqual(50);
    const shown = JSON.stringify(digest.blocks);
    for (const title of ['*Broken now (500)*', '*Noisiest workflows*', '*Alerts*', '*Storms*', '*Silenced or in maintenance*']) expect(shown).toContain(title);
    expect(shown).toContain('500 alerts opened');
    const notes = [...shown.matchAll(/… (\d+) more not shown/g)].map((m) => Number(m[1]));
    expect(notes).toHaveLength(2);
    const lines = (digest.blocks as { type: string; text?: { text: string } }[]).filter((b) => b.type === 'section').flatMap((b) => b.text!.text.split('\n')).filter((l) => l.startsWith('• '));
    const shownOpen = lines.filter((l) => / warning, open /.test(l)).length;
    const shownSilenced = lines.filter((l) => /silenced until resolved/.test(l)).length;
    expect(notes).toEqual([500 - shownOpen, 300 - shownSilenced]);
    // The mail has no block limit: it lists them all.
    expect(digest.plainText.split('\n').filter((l) => / warning, open /.test(l))).toHaveLength(500);
  });

  it('leaves out a workflow in shadow, and says nothing for a tenant in shadow (told only to the audit destination)', async () => {
    await t.db.updateTable('workflows').set({ shadow: true }).where('tenantId', '=', 'acme').where('name', '=', 'nightly-etl').execute();
    const facts = (await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!;
    expect(facts.open).toEqual([]);
    expect(facts.noisiest.map((n) => n.workflow)).not.toContain('nightly-etl');
    expect(facts.opened).toBe(2);
    expect(buildDigest(facts)!.plainText).not.toContain('nightly-etl');

    await t.db.updateTable('tenants').set({ shadow: true }).where('id', '=', 'acme').execute();
    await t.db.updateTable('workflows').set({ shadow: false }).where('tenantId', '=', 'acme').execute();
    expect(buildDigest((await loadDigestFacts(t.db, 'acme', SINCE, FIRE))!)).toBeUndefined();
  });

  it('is absent for a quiet night', async () => {
    const facts = (await loadDigestFacts(t.db, 'globex', SINCE, FIRE))!;
    expect(buildDigest(facts)).toBeUndefined();
  });

  it('is posted (and mailed) once per tenant and fire time with two replicas firing, and nothing for the quiet tenant', async () => {
    const sink = await SmtpSink.start();
    const email = { kind: 'email', to: ['ops@acme.example.com'] };
    await t.db.updateTable('tenants').set({ destinations: JSON.stringify([email]) }).execute();
    const mail = digestMailer({ db: t.db, config: { SMTP_URL: sink.url, SMTP_FROM: 'bot <bot@example.com>' } });
    const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: rig.slack.url, logger: silentLogger }));
    const replica = (id: string) => createHousekeeping({ db: t.db, clock: rig.clock, logger: silentLogger, replicaId: id }, [digestJob({ db: t.db, logger: silentLogger, replicaId: id }, api, mail)]);
    const [a, b] = [replica('a'), replica('b')];
    await Promise.all([a.fire('digest', FIRE), b.fire('digest', FIRE)]);
    // The next minute's check (the other replica, say) finds 09:00 claimed and sends nothing more.
    rig.clock.set(new Date(FIRE.getTime() + 60_000));
    await Promise.all([a.fire('digest', rig.clock.now()), b.fire('digest', rig.clock.now())]);

    expect(rig.slack.messages('CACME')).toHaveLength(1);
    expect(rig.slack.messages('CACME')[0]!.text).toMatch(/^Digest for Acme/);
    expect(rig.slack.messages('CGLOBEX')).toHaveLength(0);
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]!.envelopeTo).toEqual(['ops@acme.example.com']);
    expect(sink.received[0]!.text).toContain('3 alerts opened, 2 resolved (median time to resolve 1 hour)');
    await sink.close();
    const claims = await t.db.selectFrom('housekeepingFirings').select(['job', 'fireAt', 'result']).where('job', 'like', 'digest:%').orderBy('job').execute();
    expect(claims).toEqual([
      { job: 'digest:acme', fireAt: FIRE, result: expect.objectContaining({ sent: true, emailed: 1 }) },
      { job: 'digest:globex', fireAt: FIRE, result: { sent: false, quiet: true, attempts: 1 } },
    ]);
    // Long after the fire time nothing is caught up.
    rig.clock.set(new Date(FIRE.getTime() + 3_600_000));
    expect(await a.fire('digest', rig.clock.now())).toEqual({ ran: true, result: {} });
  });
  it('one mailbox refusing the digest does not keep it from the tenant’s other email destinations; the firing counts both', async () => {
    const sink = await SmtpSink.start();
    const destinations = [
      { kind: 'email', to: ['gone@acme.example.com'] },
      { kind: 'email', to: ['ops@acme.example.com'] },
    ];
    await t.db.updateTable('tenants').set({ destinations: JSON.stringify(destinations) }).where('id', '=', 'acme').execute();
    const mail = digestMailer({ db: t.db, config: { SMTP_URL: sink.url, SMTP_FROM: 'bot <bot@example.com>' } });
    const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: rig.slack.url, logger: silentLogger }));
    // The first message is refused for good (550: no such mailbox), as a relay answers for an address that left.
    sink.rejectWith(550);
    const job = createHousekeeping({ db: t.db, clock: rig.clock, logger: silentLogger, replicaId: 'a' }, [digestJob({ db: t.db, logger: silentLogger, replicaId: 'a' }, api, mail)]);
    await job.fire('digest', FIRE);

    expect(rig.slack.messages('CACME')).toHaveLength(1);
    expect(sink.received.map((m) => m.envelopeTo)).toEqual([['ops@acme.example.com']]);
    await sink.close();
    const claim = await t.db.selectFrom('housekeepingFirings').select('result').where('job', '=', 'digest:acme').executeTakeFirstOrThrow();
    expect(claim.result).toMatchObject({ sent: true, emailed: 1, emailFailed: 1 });
  });
});

/**
 * A firing whose facts could not be read (the database away for a moment)
 * sent nothing: it is tried again the next minute, a bounded number of times
 * (DIGEST_ATTEMPTS), by whichever replica claims the retry first, and never
 * sent twice.
 */
describe('a digest whose facts could not be read', () => {
  /** The job's database, failing its first `times` read transactions (the claim's own statements still work). */
  function failingReads(times: number): { db: typeof t.db; failed: () => number } {
    let failed = 0;
    const db = new Proxy(t.db, {
      get(target, prop, receiver) {
        if (prop === 'transaction' && failed < times) {
          return () => {
            failed++;
            throw new Error('Connection terminated unexpectedly');
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { db, failed: () => failed };
  }
  const minute = (n: number) => new Date(FIRE.getTime() + n * 60_000);
  const replica = (id: string, db: typeof t.db) => {
    const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: rig.slack.url, logger: silentLogger }));
    return createHousekeeping({ db: t.db, clock: rig.clock, logger: silentLogger, replicaId: id }, [digestJob({ db, logger: silentLogger, replicaId: id }, api)]);
  };

  it('is tried again the next minute and posted once, though two replicas retry at once', async () => {
    const flaky = failingReads(1);
    const a = replica('a', flaky.db);
    await a.fire('digest', FIRE);
    expect(flaky.failed()).toBe(1);
    expect(rig.slack.messages('CACME')).toHaveLength(0);
    const first = await t.db.selectFrom('housekeepingFirings').selectAll().where('job', '=', 'digest:acme').executeTakeFirstOrThrow();
    expect(first).toMatchObject({ finishedAt: null, error: 'Connection terminated unexpectedly', result: { attempts: 1 } });

    const b = replica('b', t.db);
    const c = replica('c', t.db);
    rig.clock.set(minute(1));
    await Promise.all([a.fire('digest', minute(1)), b.fire('digest', minute(1)), c.fire('digest', minute(1))]);
    rig.clock.set(minute(2));
    await Promise.all([b.fire('digest', minute(2)), c.fire('digest', minute(2))]);
    expect(rig.slack.messages('CACME')).toHaveLength(1);
    const done = await t.db.selectFrom('housekeepingFirings').selectAll().where('job', '=', 'digest:acme').executeTakeFirstOrThrow();
    expect(done).toMatchObject({ error: null, result: expect.objectContaining({ sent: true, attempts: 2 }) });
    expect(done.finishedAt).not.toBeNull();
  });

  it('a replica that stalled before posting is taken over after DIGEST_STALE_MS, and posts nothing when it wakes', async () => {
    // Replica a's read of acme's facts hangs (a stalled process, a lost connection) until let go.
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let held = false;
    const stalled = new Proxy(t.db, {
      get(target, prop, receiver) {
        if (prop === 'transaction' && !held) {
          held = true;
          return () => ({ setIsolationLevel: (level: 'repeatable read') => ({ execute: async (cb: never) => (await gate, target.transaction().setIsolationLevel(level).execute(cb)) }) });
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const a = replica('a', stalled);
    const firing = a.fire('digest', FIRE);
    await eventually(async () => expect(await t.db.selectFrom('housekeepingFirings').select('job').where('job', '=', 'digest:acme').execute()).toHaveLength(1));
    const b = replica('b', t.db);
    rig.clock.set(minute(1));
    await b.fire('digest', minute(1)); // a still holds it: not stale yet
    expect(rig.slack.messages('CACME')).toHaveLength(0);
    const later = new Date(FIRE.getTime() + DIGEST_STALE_MS + 60_000);
    rig.clock.set(later);
    await b.fire('digest', later);
    expect(rig.slack.messages('CACME')).toHaveLength(1);
    letGo();
    await firing;
    expect(rig.slack.messages('CACME')).toHaveLength(1);
    const row = await t.db.selectFrom('housekeepingFirings').selectAll().where('job', '=', 'digest:acme').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ replica: 'b', error: null, result: expect.objectContaining({ sent: true, attempts: 2 }) });
  });

  it('a post Slack rate-limits is tried again the next minute: one digest, the attempts counted', async () => {
    rig.slack.failNext({ kind: 'ratelimited' }, { method: 'chat.postMessage', channel: 'CACME' });
    const a = replica('a', t.db);
    await a.fire('digest', FIRE);
    expect(rig.slack.messages('CACME')).toHaveLength(0);
    expect(await t.db.selectFrom('housekeepingFirings').selectAll().where('job', '=', 'digest:acme').executeTakeFirstOrThrow()).toMatchObject({ finishedAt: null, error: 'slack: ratelimited', result: { attempts: 1 } });
    rig.clock.set(minute(1));
    await Promise.all([a.fire('digest', minute(1)), replica('b', t.db).fire('digest', minute(1))]);
    expect(rig.slack.messages('CACME')).toHaveLength(1);
  });

  it('is given up after DIGEST_ATTEMPTS failed attempts, with the error kept', async () => {
    const broken = failingReads(Infinity);
    const a = replica('a', broken.db);
    for (let m = 0; m < 10; m++) {
      rig.clock.set(minute(m));
      await a.fire('digest', minute(m));
    }
    expect(broken.failed()).toBe(2 * DIGEST_ATTEMPTS); // acme's and globex's reads, each given up
    expect(rig.slack.messages('CACME')).toHaveLength(0);
    const row = await t.db.selectFrom('housekeepingFirings').selectAll().where('job', '=', 'digest:acme').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ error: 'Connection terminated unexpectedly', result: { attempts: DIGEST_ATTEMPTS, gaveUp: true } });
    expect(row.finishedAt).not.toBeNull();
  });
});

describe('/scheduler digest', () => {
  const answer = (i: number) =>
    eventually(() => {
      const r = rig.slack.responses[i];
      if (!r) throw new Error(`no response #${i} yet`);
      return r.body as { response_type?: string; text: string; blocks?: { type: string }[] };
    });

  it('shows the tenant its digest of the last day, ephemeral; a quiet tenant is told so; the platform channel names the tenant', async () => {
    expect((await rig.command('digest', { channel: 'CACME' })).status).toBe(200);
    const acme = await answer(0);
    expect(acme.response_type).toBe('ephemeral');
    expect(acme.text).toMatch(/^Digest for Acme/);
    expect(JSON.stringify(acme.blocks)).toContain('nightly-etl');

    await rig.command('digest', { channel: 'CGLOBEX' });
    expect((await answer(1)).text).toMatch(/^Nothing to report for \*Globex\*/);

    await rig.command('digest', { channel: 'CPLAT' });
    expect((await answer(2)).text).toContain('Usage: `/scheduler digest');
    await rig.command('digest acme', { channel: 'CPLAT' });
    expect((await answer(3)).text).toMatch(/^Digest for Acme/);
    await rig.command('digest acme', { channel: 'CGLOBEX' });
    expect((await answer(4)).text).toContain('This channel belongs to *Globex*');
    expect(rig.slack.messages()).toHaveLength(0);
  });
});
