import { describe, expect, it } from 'vitest';
import type { ScenarioInput } from '../../src/replay/scenario.js';
import type { TranscriptCall } from '../../src/replay/transcript.js';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, replay, tickRows, type Replayed } from './support.js';

/**
 * Two tenants that named their workflows alike, in different zones: what one
 * tenant's channel hears is its own, whatever the other's workflows do at
 * the same minute; the platform channel hears both, each in its own place.
 */

const ACME = { id: 'acme', name: 'Acme', channel: 'CACME' };
const GLOBEX = { id: 'globex', name: 'Globex', channel: 'CGLOBEX' };
const tenants = [ACME, GLOBEX];
/** Each alert with its workflow's tenant, in id order. */
async function alertsWithTenant(db: Replayed['db']) {
  const tenantOf = new Map((await db.selectFrom('workflows').select(['id', 'tenantId']).execute()).map((w) => [w.id, w.tenantId]));
  return (await alertsOf(db)).map((a) => ({ ...a, tenantId: tenantOf.get(a.workflowId)! }));
}
const textIn = (calls: readonly TranscriptCall[], channel: string) => calls.filter((c) => c.channel === channel).map((c) => `${c.text} ${JSON.stringify(c.blocks)}`).join('\n');

describe('two tenants, one pipeline each, the same names', { timeout: 120_000 }, () => {
  it('ingest → transform → publish in London and Kolkata: transform breaks for three hours; one thread per tenant, publish held back and named there, no cross-talk', async () => {
    const pipeline = (tenant: string, tz: string) => [
      { tenant, name: 'ingest', cron: '0 * * * *', timezone: tz },
      { tenant, name: 'transform', cron: '10 * * * *', timezone: tz, dependsOn: ['ingest'] },
      { tenant, name: 'publish', cron: '20 * * * *', timezone: tz, dependsOn: ['transform'] },
    ];
    // Both break in the same three UTC hours: London's ticks at :10 and :20, Kolkata's (+05:30) at :40 and :50.
    const broken = (workflow: string, error: string) => ({ workflow, from: '2026-03-10T01:00:00Z', to: '2026-03-10T03:59:00Z', attempts: [{ status: 'failed' as const, error }] });
    const { db, transcript } = await replay({
      start: '2026-03-10T00:30:00Z',
      until: '2026-03-10T06:00:00Z',
      platformChannel: 'CPLATFORM',
      tenants,
      workflows: [...pipeline('acme', 'Europe/London'), ...pipeline('globex', 'Asia/Kolkata')],
      outcomes: [
        broken('acme/transform', 'acme: schema drift in column price'),
        broken('acme/publish', 'acme: nothing to publish'),
        broken('globex/transform', 'globex: out of memory'),
        broken('globex/publish', 'globex: nothing to publish'),
      ],
    }, { escalationIntervalSeconds: 300 });
    expect((await tickRows(db, 'transform')).slice(0, 8)).toEqual([
      '00:40 succeeded', // globex
      '01:10 failed', '01:40 failed', '02:10 failed', '02:40 failed', '03:10 failed', '03:40 failed',
      '04:10 succeeded',
    ]);
    const alerts = await alertsWithTenant(db);
    // Transform alone alerts, once per tenant: publish's failures are told in its upstream's thread.
    expect(alerts.map((a) => [a.tenantId, a.workflow, a.severity, a.status, a.consecutiveFailures])).toEqual([
      ['acme', 'transform', 'warning', 'resolved', 3],
      ['globex', 'transform', 'warning', 'resolved', 3],
    ]);
    // Hourly: two confirmed failures (each after two immediate retries), then resolved by the next success.
    expect(alerts.map((a) => [a.openedAt.toISOString().slice(11, 16), a.resolvedAt!.toISOString().slice(11, 16)])).toEqual([['02:13', '04:11'], ['02:43', '04:41']]);
    const story = storyByChannel(threadsOf(transcript.calls));
    expect(story.CACME).toEqual({ transform: [['opened', 'upstream_affected', 'resolved']] });
    expect(story.CGLOBEX).toEqual({ transform: [['opened', 'upstream_affected', 'resolved']] });
    expect(story.CPLATFORM).toEqual({ transform: [['opened', 'upstream_affected', 'resolved'], ['opened', 'upstream_affected', 'resolved']] });
    // No cross-talk: a tenant's channel never names the other tenant or its errors.
    expect(textIn(transcript.calls, 'CACME')).not.toMatch(/globex|out of memory/i);
    expect(textIn(transcript.calls, 'CGLOBEX')).not.toMatch(/acme|schema drift/i);
    expect(textIn(transcript.calls, 'CACME')).toMatch(/Also affected[^\n]*publish/);
  });
});

describe('two tenants, the same five names failing at the same minute', { timeout: 120_000 }, () => {
  it('each tenant channel gets one storm of its own five; the platform channel one storm of all ten; counts and errors stay apart', async () => {
    const names = ['load-a', 'load-b', 'load-c', 'load-d', 'load-e'];
    const input: ScenarioInput = {
      start: '2026-03-10T00:30:00Z',
      until: '2026-03-10T04:30:00Z',
      platformChannel: 'CPLATFORM',
      tenants,
      workflows: [
        ...names.map((name) => ({ tenant: 'acme', name, cron: '0 * * * *', timezone: 'UTC' })),
        // New York's hours are whole: its :00 is UTC's :00.
        ...names.map((name) => ({ tenant: 'globex', name, cron: '0 * * * *', timezone: 'America/New_York' })),
      ],
      outcomes: [
        ...names.map((name) => ({ workflow: `acme/${name}`, from: '2026-03-10T01:00:00Z', to: '2026-03-10T02:00:00Z', attempts: [{ status: 'failed' as const, error: 'acme warehouse: connection refused' }] })),
        // Globex fails one tick longer: its counts are three, Acme's two.
        ...names.map((name) => ({ workflow: `globex/${name}`, from: '2026-03-10T01:00:00Z', to: '2026-03-10T03:00:00Z', attempts: [{ status: 'failed' as const, error: 'globex s3: access denied' }] })),
      ],
    };
    const { db, transcript } = await replay(input, { escalationIntervalSeconds: 300 });
    const alerts = await alertsWithTenant(db);
    expect(alerts).toHaveLength(10);
    for (const a of alerts) expect(a.consecutiveFailures, `${a.tenantId}/${a.workflow}`).toBe(a.tenantId === 'acme' ? 2 : 3);
    expect(new Set(alerts.map((a) => a.openedAt.toISOString()))).toEqual(new Set(['2026-03-10T02:03:00.000Z']));

    const storms = await db.selectFrom('storms').select(['id', 'destination']).orderBy('destination').execute();
    expect(storms.map((s) => s.destination)).toEqual(['slack:CACME', 'slack:CGLOBEX', 'slack:CPLATFORM']);
    const members = async (destination: string) => {
      const storm = storms.find((s) => s.destination === destination)!;
      const rows = await db.selectFrom('stormAlerts').innerJoin('alerts', 'alerts.id', 'stormAlerts.alertId').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('workflows.tenantId').where('stormId', '=', storm.id).execute();
      return rows.map((r) => r.tenantId).sort();
    };
    expect(await members('slack:CACME')).toEqual(Array(5).fill('acme'));
    expect(await members('slack:CGLOBEX')).toEqual(Array(5).fill('globex'));
    expect(await members('slack:CPLATFORM')).toEqual([...Array(5).fill('acme'), ...Array(5).fill('globex')]);

    // One root per channel (the storm message), not ten.
    for (const channel of ['CACME', 'CGLOBEX', 'CPLATFORM']) {
      const roots = transcript.calls.filter((c) => c.channel === channel && c.method === 'chat.postMessage' && c.thread_ts === null);
      expect(roots, channel).toHaveLength(1);
    }
    // The platform channel's storm names each alert with its tenant: "load-a, load-a" tells nobody which is which.
    const platformRoot = transcript.calls.find((c) => c.channel === 'CPLATFORM' && c.thread_ts === null)!;
    expect(platformRoot.text).toContain('(Acme / load-a, Globex / load-a, Acme / load-b, Globex / load-b,');
    const platformLast = transcript.calls.filter((c) => c.channel === 'CPLATFORM' && c.method === 'chat.update').at(-1)!;
    expect(JSON.stringify(platformLast.blocks)).toContain('Resolved: Acme / load-a, Acme / load-b');
    // A tenant's own storm needs no tenant names.
    expect(transcript.calls.find((c) => c.channel === 'CACME' && c.thread_ts === null)!.text).toContain('(load-a, load-b, load-c, load-d, load-e)');

    // Timed as live, where the escalation clock looks every interval (here 5 minutes from 00:30): each tenant's
    // shared cause is called out on the platform channel at the first look after the openings (02:05), not an
    // hour later; Acme's storm is over at the first look after it stopped growing with none open (resolved 03:01).
    const sharedCauses = transcript.calls.filter((c) => c.channel === 'CPLATFORM' && /Shared cause/.test(String(c.text)));
    expect(sharedCauses.slice(0, 2).map((c) => [c.at.slice(11, 16), String(c.text).slice(0, 8)])).toEqual([['02:05', 'Acme / l'], ['02:05', 'Globex /']]);
    const acmeOver = transcript.calls.find((c) => c.channel === 'CACME' && /^Storm over/.test(String(c.text)));
    expect(acmeOver?.at.slice(11, 16)).toBe('03:05');
    // Every storm message ends showing the storm over, all resolved (the platform's waited a second for its update slot).
    for (const channel of ['CACME', 'CGLOBEX', 'CPLATFORM']) {
      const last = transcript.calls.filter((c) => c.channel === channel && c.method === 'chat.update').at(-1)!;
      expect(last.text, channel).toMatch(/^Storm over: (5|10) alerts: 0 open, (5|10) resolved$/);
    }
    expect(textIn(transcript.calls, 'CACME')).not.toMatch(/globex|access denied/i);
    expect(textIn(transcript.calls, 'CGLOBEX')).not.toMatch(/acme|connection refused/i);
  });
});

describe('two tenants downstream of a third tenant\'s load', { timeout: 120_000 }, () => {
  it('the shared warehouse fails: one alert in its tenant\'s channel that counts the others\' reports without naming them; their channels are told once that they are held back and once that it ended, never by whom; the Run now clears it', async () => {
    const DATA = { id: 'data', name: 'Data Platform', channel: 'CDATA' };
    const { db, transcript } = await replay(
      {
        start: '2026-03-10T01:55:00Z',
        until: '2026-03-10T05:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [DATA, ...tenants],
        workflows: [
          { tenant: 'data', name: 'warehouse', cron: '0 2 * * *', timezone: 'UTC' },
          { tenant: 'acme', name: 'report', cron: '10 * * * *', timezone: 'Europe/London', dependsOn: ['data/warehouse'] },
          { tenant: 'globex', name: 'report', cron: '10 * * * *', timezone: 'America/New_York', dependsOn: ['data/warehouse'] },
        ],
        outcomes: [
          { workflow: 'warehouse', from: '2026-03-10T02:00:00Z', to: '2026-03-10T02:00:00Z', attempts: [{ status: 'failed', error: 'disk full on wh-01' }] },
          { workflow: 'acme/report', from: '2026-03-10T02:00:00Z', to: '2026-03-10T03:59:00Z', attempts: [{ status: 'failed', error: 'acme: stale warehouse' }] },
          { workflow: 'globex/report', from: '2026-03-10T02:00:00Z', to: '2026-03-10T03:59:00Z', attempts: [{ status: 'failed', error: 'globex: stale warehouse' }] },
        ],
        actions: [{ at: '2026-03-10T03:30:00Z', user: 'UDATA', channel: 'CDATA', action: 'run_now', workflow: 'warehouse' }],
      },
      { escalationIntervalSeconds: 300 },
    );
    const alerts = await alertsWithTenant(db);
    // Acme's and Globex's reports failed twice each (02:10, 03:10) while the warehouse's alert was open: no alert of their own.
    expect(alerts.map((a) => [a.tenantId, a.workflow, a.severity, a.status])).toEqual([['data', 'warehouse', 'critical', 'resolved']]);
    const story = storyByChannel(threadsOf(transcript.calls));
    // Each downstream channel: one note when its report is first held back (its 02:10 run's failure, as the upstream's
    // thread counts it), one when the incident ends (the Run now's run finishing), not one per run (03:10 adds none).
    for (const channel of ['CACME', 'CGLOBEX']) {
      expect(story[channel], channel).toEqual({ report: [['upstream_held'], ['upstream_released']] });
      const notes = transcript.calls.filter((c) => c.channel === channel);
      expect(notes.map((c) => [c.at.slice(11, 16), c.thread_ts])).toEqual([['02:13', null], ['03:31', null]]);
      const affected = transcript.calls.find((c) => c.channel === 'CDATA' && /other tenants/.test(JSON.stringify(c.blocks)))!;
      expect(affected.at.slice(11, 16)).toBe('02:13');
      expect(String(notes[0]!.text)).toMatch(/^\*report\* is held back since .*: an upstream it depends on \(another tenant's workflow\) is failing/);
      expect(String(notes[1]!.text)).toMatch(/^\*report\* is no longer held back: .* Held back meanwhile: 2 failures\./);
      // Never the upstream: its name, tenant, error, or the other downstream tenant.
      expect(textIn(transcript.calls, channel)).not.toMatch(/warehouse|wh-01|disk full|data platform|acme|globex/i);
    }
    expect(story.CDATA).toEqual({ warehouse: [['opened', 'upstream_affected', 'run_requested', 'run_finished', 'resolved']] });
    // The data tenant's channel counts the other tenants' workflows, never names them or their errors.
    const inData = textIn(transcript.calls, 'CDATA');
    expect(inData).toMatch(/2 workflows of other tenants/);
    expect(inData).not.toMatch(/acme|globex|report|stale warehouse/i);
  });
});
