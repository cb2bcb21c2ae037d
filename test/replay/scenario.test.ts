import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/domain/durations.js';
import { scriptedAttempt } from '../../src/replay/outcomes.js';
import { checkScenario, parseScenario, ScenarioError, type ScenarioInput } from '../../src/replay/scenario.js';

const valid = (): ScenarioInput => ({
  start: '2026-03-10T01:55:00Z',
  until: '2026-03-10T09:30:00Z',
  platformChannel: 'CPLATFORM',
  tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
  workflows: [
    { tenant: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *', timezone: 'UTC', policy: {} },
    { tenant: 'acme', name: 'quality-check', cron: '*/5 * * * *' },
  ],
  outcomes: [{ workflow: 'quality-check', from: '2026-03-10T03:00:00Z', to: '2026-03-10T03:30:00Z', attempts: [{ status: 'missing' }] }],
  actions: [{ at: '2026-03-10T09:00:00Z', user: 'U_CUSTOMER', channel: 'CACME', action: 'run_now', workflow: 'nightly-pipeline', outcome: { status: 'succeeded' } }],
});

/** The problems a broken scenario is reported with. */
function problems(mutate: (s: any) => void): string[] {
  const s = valid();
  mutate(s);
  try {
    checkScenario(s, 'night.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    return (error as ScenarioError).problems;
  }
  throw new Error('the scenario was accepted');
}

describe('scenario validation names the path at fault', () => {
  it.each([
    ['a bad cron', (s: any) => (s.workflows[1].cron = '*/5 * *'), 'workflows[1].cron', /invalid cron/],
    ['an unknown time zone', (s: any) => (s.workflows[0].timezone = 'Mars/Olympus'), 'workflows[0].timezone', /IANA/],
    ['a time without a zone', (s: any) => (s.start = '2026-03-10 01:55'), 'start', /ISO 8601/],
    ['until before start', (s: any) => (s.until = '2026-03-10T01:00:00Z'), 'until', /after start/],
    ['an unknown attempt status', (s: any) => (s.outcomes[0].attempts[0].status = 'crashed'), 'outcomes[0].attempts[0].status', /./],
    ['an outcome for an unknown workflow', (s: any) => (s.outcomes[0].workflow = 'nightly'), 'outcomes[0].workflow', /no workflow "nightly"/],
    ['a range that ends before it starts', (s: any) => (s.outcomes[0].to = '2026-03-10T02:00:00Z'), 'outcomes[0].to', /before from/],
    ['an action in a channel nobody owns', (s: any) => (s.actions[0].channel = 'CELSEWHERE'), 'actions[0].channel', /tenant channel nor the platformChannel/],
    ['an action outside the window', (s: any) => (s.actions[0].at = '2026-03-11T09:00:00Z'), 'actions[0].at', /between start and until/],
    ['a silence with a bad duration', (s: any) => (s.actions[0] = { ...s.actions[0], action: 'silence', duration: 'four hours', outcome: undefined }), 'actions[0].duration', /4h/],
    ['an unknown action field', (s: any) => (s.actions[0].colour = 'red'), 'actions[0]', /unknown field "colour"/],
    ['a workflow of an unknown tenant', (s: any) => (s.workflows[1].tenant = 'globex'), 'workflows[1].tenant', /unknown tenant/],
    ['a bad policy override', (s: any) => (s.workflows[0].policy = { retries: -1 }), 'workflows[0].policy.retries', /./],
    ['a missing first attempt on a workflow declared managed', (s: any) => (s.workflows[1].mode = 'managed'), 'outcomes[0].attempts[0].status', /managed workflow fires its own ticks/],
  ])('%s', (_name, mutate, path, message) => {
    const found = problems(mutate);
    const line = found.find((p) => p.startsWith(`night.json: ${path}: `));
    expect(line, found.join('\n')).toBeDefined();
    expect(line).toMatch(message);
  });

  it('an action in a tenant channel only reaches that tenant: another tenant\'s workflow is not found there', () => {
    const found = problems((s) => {
      s.tenants.push({ id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
      s.workflows.push({ tenant: 'globex', name: 'billing', cron: '0 * * * *' });
      s.actions[0] = { ...s.actions[0], workflow: 'billing' };
    });
    expect(found.join('\n')).toMatch(/actions\[0\]\.workflow: no workflow "billing" among tenant "acme"'s workflows/);
  });

  it('a maintenance window names its tenant, a workflow of that tenant, a moment in the period and an end after its start', () => {
    const found = problems((s) => {
      s.maintenance = [
        { at: '2026-03-11T00:00:00Z', tenant: 'acme', startsAt: '2026-03-10T03:00:00Z', endsAt: '2026-03-10T04:00:00Z' },
        { at: '2026-03-10T02:00:00Z', tenant: 'ghost', startsAt: '2026-03-10T03:00:00Z', endsAt: '2026-03-10T04:00:00Z' },
        { at: '2026-03-10T02:00:00Z', tenant: 'acme', workflow: 'nope', startsAt: '2026-03-10T04:00:00Z', endsAt: '2026-03-10T03:00:00Z' },
      ];
    });
    expect(found).toEqual([
      expect.stringContaining('maintenance[0].at: must be between start and until'),
      expect.stringContaining('maintenance[1].tenant: unknown tenant'),
      expect.stringContaining('maintenance[2].workflow: no workflow "nope" in tenant "acme"'),
      expect.stringContaining('maintenance[2].endsAt: must be after startsAt'),
    ]);
  });

  it('a name two tenants share must be written tenant/name', () => {
    const found = problems((s) => {
      s.tenants.push({ id: 'globex', name: 'Globex', channel: 'CGLOBEX' });
      s.workflows.push({ tenant: 'globex', name: 'quality-check', cron: '0 * * * *' });
    });
    expect(found.join('\n')).toMatch(/outcomes\[0\]\.workflow: "quality-check" names 2 workflows; write tenant\/name \(acme\/quality-check, globex\/quality-check\)/);
  });

  it('points at the line of the file and shows the value', () => {
    const text = JSON.stringify({ ...valid(), workflows: [{ tenant: 'acme', name: 'nightly-pipeline', cron: '61 2 * * *' }] }, null, 2);
    expect(() => parseScenario(text, 'night.json')).toThrow(/night\.json:\d+: workflows\[0\]\.cron: invalid cron.*\(got "61 2 \* \* \*"\)/);
    expect(() => parseScenario('{ "start": ', 'night.json')).toThrow(/night\.json: not valid JSON/);
  });
});

describe('a valid scenario', () => {
  it('resolves references, sorts actions and makes a workflow that can miss a tick observed', () => {
    const s = checkScenario(valid());
    expect(s.workflows.map((w) => [w.key, w.mode])).toEqual([
      ['acme/nightly-pipeline', 'managed'],
      ['acme/quality-check', 'observed'],
    ]);
    expect(s.outcomes[0]).toMatchObject({ workflow: 'acme/quality-check', durationSeconds: 60 });
    expect(s.actions[0]).toMatchObject({ workflow: 'acme/nightly-pipeline', outcome: { status: 'succeeded' } });
    expect(s.start).toEqual(new Date('2026-03-10T01:55:00Z'));
  });
});

describe('scripted attempts', () => {
  const s = checkScenario({
    ...valid(),
    outcomes: [
      { workflow: 'nightly-pipeline', from: '2026-03-10T02:00:00Z', to: '2026-03-10T02:00:00Z', durationSeconds: 180, attempts: [{ status: 'failed', error: 'reset' }, { status: 'succeeded' }] },
      { workflow: 'nightly-pipeline', attempts: [{ status: 'failed', error: 'later rule' }] },
      { workflow: 'quality-check', from: '2026-03-10T02:05:00Z', attempts: [{ status: 'failed', error: 'a' }, { status: 'failed', error: 'b' }] },
    ],
  });
  const at = (iso: string) => new Date(iso);

  it('attempt k takes the k-th entry of the first covering rule; the last entry repeats', () => {
    expect(scriptedAttempt(s.outcomes, 'acme/nightly-pipeline', at('2026-03-10T02:00:00Z'), 1)).toEqual({ attempt: { status: 'failed', error: 'reset' }, durationMs: 180_000 });
    expect(scriptedAttempt(s.outcomes, 'acme/nightly-pipeline', at('2026-03-10T02:00:00Z'), 2).attempt.status).toBe('succeeded');
    expect(scriptedAttempt(s.outcomes, 'acme/nightly-pipeline', at('2026-03-10T02:00:00Z'), 4).attempt.status).toBe('succeeded');
    expect(scriptedAttempt(s.outcomes, 'acme/quality-check', at('2026-03-10T04:00:00Z'), 3).attempt).toEqual({ status: 'failed', error: 'b' });
  });

  it('a tick outside the first rule falls to the next covering one, and with none it succeeds after a minute', () => {
    expect(scriptedAttempt(s.outcomes, 'acme/nightly-pipeline', at('2026-03-11T02:00:00Z'), 1).attempt).toEqual({ status: 'failed', error: 'later rule' });
    expect(scriptedAttempt(s.outcomes, 'acme/quality-check', at('2026-03-10T02:00:00Z'), 1)).toEqual({ attempt: { status: 'succeeded' }, durationMs: 60_000 });
  });
});

describe('durations', () => {
  it('reads 90s, 30m, 4h, 1d and 1h30m, and nothing else', () => {
    expect([parseDuration('90s'), parseDuration('30m'), parseDuration('4h'), parseDuration('1d'), parseDuration('1h30m')]).toEqual([90_000, 1_800_000, 14_400_000, 86_400_000, 5_400_000]);
    expect([parseDuration('4 hours'), parseDuration('0m'), parseDuration(''), parseDuration('h')]).toEqual([undefined, undefined, undefined, undefined]);
  });
});
