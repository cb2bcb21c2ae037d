import { describe, expect, it } from 'vitest';
import { parseWorkflowsFile, WorkflowsFileError } from '../src/config/workflows-file.js';

/**
 * An operator fixing a workflows file learns of every problem in one start:
 * the checks across the file (duplicates, unknown tenants, channel clashes,
 * dependencies) and an entry's own rules come with the shape problems, not
 * after those are fixed.
 */

function problemsOf(file: unknown, env: Record<string, string> = {}): { text: string; problems: string[] } {
  const text = JSON.stringify(file, null, 2);
  try {
    parseWorkflowsFile(text, 'wf.json', env);
  } catch (error) {
    if (error instanceof WorkflowsFileError) return { text, problems: error.problems };
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

describe('every problem of the workflows file at once', () => {
  it('reports duplicates, unknown tenants, channel clashes and cycles beside fields of the wrong type or unknown', () => {
    const { text, problems } = problemsOf({
      tenants: [
        { id: 'acme', name: 'Acme', channel: 'CACME', colour: 'red' },
        { id: 'globex', name: 'Globex', channel: 'CACME' },
      ],
      workflows: [
        { tenant: 'acme', name: 'load', cron: '0 * * * *', policy: { retries: 'three' }, dependsOn: ['report'] },
        { tenant: 'acme', name: 'report', cron: 5, dependsOn: ['load'] },
        { tenant: 'ghost', name: 'orphan', cron: '0 * * * *' },
        { tenant: 'globex', name: 'dup', cron: '0 * * * *', timezone: 3 },
        { tenant: 'globex', name: 'dup', cron: '0 * * * *' },
        { tenant: 'globex', name: 'needs', cron: '0 * * * *', dependsOn: ['nothing-by-that-name'] },
      ],
    });
    const lines = text.split('\n');
    const lineOf = (needle: string, from = 0) => lines.findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    expect(problems).toEqual(
      expect.arrayContaining([
        `wf.json:${lineOf('"id": "acme"') - 1}: tenants[0]: unknown field "colour"`,
        expect.stringMatching(/^wf\.json:\d+: workflows\[0\]\.policy\.retries: .*\(got "three"\)$/),
        expect.stringMatching(/^wf\.json:\d+: workflows\[1\]\.cron: .*\(got 5\)$/),
        expect.stringMatching(/^wf\.json:\d+: workflows\[3\]\.timezone: .*\(got 3\)$/),
        `wf.json:${lineOf('"channel": "CACME"', lineOf('"globex"'))}: tenants[1].channel: channel already belongs to tenant "acme" (got "CACME")`,
        `wf.json:${lineOf('"ghost"')}: workflows[2].tenant: unknown tenant (got "ghost")`,
        `wf.json:${lineOf('"dup"', lineOf('"dup"') + 1)}: workflows[4].name: duplicate workflow name in tenant "globex" (got "dup")`,
        expect.stringMatching(/^wf\.json:\d+: workflows\[0\]\.dependsOn\[0\]: dependency cycle: load → report → load \(got "report"\)$/),
        expect.stringMatching(/^wf\.json:\d+: workflows\[5\]\.dependsOn\[0\]: no such workflow \(got "nothing-by-that-name"\)$/),
      ]),
    );
    expect(problems).toHaveLength(9);
  });

  it("reports an entry's own rules beside its shape problems: a managed workflow without a launcher, a secret given twice, a window without a length", () => {
    const { problems } = problemsOf(
      {
        tenants: [{ id: 'acme', name: 'Acme', destinations: [{ kind: 'webhook', url: 'https://hooks.example.com/x', minSeverity: 'loud' }] }],
        workflows: [
          { tenant: 'acme', name: 'm', cron: '0 * * * *', mode: 'managed', timezone: 3 },
          { tenant: 'acme', name: 'h', cron: '0 * * * *', launcher: { kind: 'http', url: 'https://x.example', secret: 'abcdefghijklmnopqrstuvwxyz123456', secretEnv: 'X_SECRET', mode: 'nope' } },
          { tenant: 'acme', name: 'w', cron: '0 * * * *', maintenance: [{ cron: '0 1 * * 0', reason: 5 }] },
        ],
      },
      { X_SECRET: 'abcdefghijklmnopqrstuvwxyz123456' },
    );
    const paths = problems.map((p) => p.split(': ')[1]);
    expect(paths).toEqual(
      expect.arrayContaining([
        'tenants[0].destinations[0].minSeverity',
        'tenants[0].destinations[0].secret',
        'workflows[0].timezone',
        'workflows[0].mode',
        'workflows[1].launcher.mode',
        'workflows[1].launcher.secretEnv',
        'workflows[2].maintenance[0].reason',
        'workflows[2].maintenance[0].durationMinutes',
      ]),
    );
    expect(problems).toHaveLength(8);
  });

  it('blames no reference it cannot check: a tenant or workflow whose id or name is unreadable silences "unknown" and "no such", not the rest', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme' }, { name: 'no id yet' }],
      workflows: [
        { tenant: 'globex', name: 'a', cron: '0 * * * *' },
        { tenant: 'acme', cron: '0 * * * *' },
        { tenant: 'acme', name: 'b', cron: '0 * * * *', dependsOn: ['maybe-the-unnamed-one'] },
        { tenant: 'acme', name: 'b', cron: '0 * * * *' },
      ],
    });
    expect(problems.map((p) => p.replace(/^wf\.json:\d+: /, ''))).toEqual(
      expect.arrayContaining(['tenants[1].id: required', 'workflows[1].name: required', 'workflows[3].name: duplicate workflow name in tenant "acme" (got "b")']),
    );
    expect(problems).toHaveLength(3);
  });

  it('says plainly what is wanted: a launcher kind, a whole number, a window length, a secret left out (nothing "hidden")', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme', destinations: [{ kind: 'pagerduty' }] }],
      workflows: [
        { tenant: 'acme', name: 'a', cron: '0 * * * *', launcher: { kind: 'ftp' } },
        { tenant: 'acme', name: 'b', cron: '0 * * * *', launcher: { command: './run' } },
        { tenant: 'acme', name: 'c', cron: '0 * * * *', policy: { graceSeconds: 1.5 }, maintenance: [{ cron: '0 1 * * 0' }] },
      ],
    });
    expect(problems.map((p) => p.replace(/^wf\.json:\d+: /, ''))).toEqual([
      'tenants[0].destinations[0].routingKey: give "routingKey" or "routingKeyEnv" (the name of an environment variable holding it)',
      'workflows[0].launcher.kind: kind must be "command" or "http" (got "ftp")',
      'workflows[1].launcher.kind: required: kind must be "command" or "http"',
      'workflows[2].policy.graceSeconds: must be a whole number (got 1.5)',
      'workflows[2].maintenance[0].durationMinutes: how long the window lasts: give "durationMinutes" (a number) or "duration" (such as "90m" or "2h")',
    ]);
  });
});

describe('a name that is not known, but close to one that is', () => {
  it('suggests the tenant or workflow meant (another case, a typo), and nothing when none is close', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme' }, { id: 'globex-eu', name: 'Globex' }],
      workflows: [
        { tenant: 'Acme', name: 'load', cron: '0 * * * *' },
        { tenant: 'globex-ue', name: 'fx', cron: '0 * * * *' },
        { tenant: 'initech', name: 'x', cron: '0 * * * *' },
        { tenant: 'acme', name: 'warehouse-load', cron: '0 * * * *' },
        { tenant: 'acme', name: 'report', cron: '0 * * * *', dependsOn: ['warehouse-laod', 'Report-X', 'unrelated'] },
      ],
    });
    expect(problems.map((p) => p.replace(/^wf\.json:\d+: /, ''))).toEqual([
      'workflows[0].tenant: unknown tenant; did you mean "acme"? (got "Acme")',
      'workflows[1].tenant: unknown tenant; did you mean "globex-eu"? (got "globex-ue")',
      'workflows[2].tenant: unknown tenant (got "initech")',
      'workflows[4].dependsOn[0]: no such workflow; did you mean "warehouse-load"? (got "warehouse-laod")',
      'workflows[4].dependsOn[1]: no such workflow (got "Report-X")',
      'workflows[4].dependsOn[2]: no such workflow (got "unrelated")',
    ]);
  });
});

describe('the order problems are told in', () => {
  it('is the order of the file, top to bottom, whichever check found them', () => {
    const { text, problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme' }],
      workflows: [
        { tenant: 'ghost', name: 'a', cron: '0 * * * *' },
        { tenant: 'acme', name: 'b', cron: '0 * * * *', policy: { retries: 'three' } },
        { tenant: 'acme', name: 'b', cron: '0 * * * *' },
        { tenant: 'acme', name: 'c', cron: 61 },
      ],
    });
    const lines = problems.map((p) => Number(/^wf\.json:(\d+):/.exec(p)![1]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    expect(problems.map((p) => p.split(': ')[1])).toEqual(['workflows[0].tenant', 'workflows[1].policy.retries', 'workflows[2].name', 'workflows[3].cron']);
    expect(text.split('\n')[lines[0]! - 1]).toContain('"ghost"');
  });

  it('an unknown field within a typo of a known one says which, at any depth (a launcher of either kind, a policy, a destination)', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme', chanel: 'CACME', destinations: [{ kind: 'slack', channel: 'COPS', minSeverty: 'critical' }] }],
      workflows: [
        { tenant: 'acme', name: 'etl', cron: '0 2 * * *', timeZone: 'UTC', dependOn: [], colour: 'red', policy: { gracSeconds: 60 } },
        { tenant: 'acme', name: 'run', cron: '0 2 * * *', mode: 'managed', launcher: { kind: 'command', command: ['true'], timeoutSecond: 5 } },
      ],
    });
    const messages = problems.map((p) => p.split(': ').slice(1).join(': '));
    expect(messages).toEqual(
      expect.arrayContaining([
        'tenants[0]: unknown field "chanel" (did you mean "channel"?)',
        'tenants[0].destinations[0]: unknown field "minSeverty" (did you mean "minSeverity"?)',
        'workflows[0]: unknown field "timeZone" (did you mean "timezone"?), "dependOn" (did you mean "dependsOn"?), "colour"',
        'workflows[0].policy: unknown field "gracSeconds" (did you mean "graceSeconds"?)',
      ]),
    );
    expect(messages.some((m) => m.startsWith('workflows[1].launcher: unknown field "timeoutSecond"'))).toBe(true);
  });

  it('a field under the name other schedulers give it says ours (schedule, tz, retry, timeout, a bare command)', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme' }],
      workflows: [
        { tenant: 'acme', name: 'etl', schedule: '0 2 * * *', tz: 'UTC', policy: { retry: 2, timeout: 600 } },
        { tenant: 'acme', name: 'run', cron: '0 2 * * *', command: './bin/etl' },
      ],
    });
    const messages = problems.map((p) => p.split(': ').slice(1).join(': '));
    expect(messages).toEqual(
      expect.arrayContaining([
        'workflows[0]: unknown field "schedule" (did you mean "cron"?), "tz" (did you mean "timezone"?)',
        'workflows[0].policy: unknown field "retry" (did you mean "retries"?), "timeout" (did you mean "timeoutSeconds"?)',
        'workflows[1]: unknown field "command" (did you mean "launcher": {"kind": "command", "command": …}?)',
      ]),
    );
  });

  it('a destination named twice is reported beside the list\'s shape problems, not after they are fixed', () => {
    const { problems } = problemsOf({
      tenants: [{ id: 'acme', name: 'Acme', destinations: [{ kind: 'slack', channel: 'COPS' }, { kind: 'email', to: 'not-a-list' }, { kind: 'slack', channel: 'COPS' }] }],
      workflows: [],
    });
    expect(problems.map((p) => p.split(': ').slice(1).join(': '))).toEqual(
      expect.arrayContaining(['tenants[0].destinations[2]: duplicate destination "slack:COPS" (got {"kind":"slack","channel":"COPS"})', expect.stringMatching(/^tenants\[0\]\.destinations\[1\]\.to: /)]),
    );
  });
});
