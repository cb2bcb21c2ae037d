import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { parseWorkflowsFile, workflowsFileJsonSchema, WorkflowsFileError } from '../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../src/services/sync-workflows.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { makeRun, T0 } from './helpers/factories.js';

function problemsOf(text: string): string[] {
  try {
    parseWorkflowsFile(text, 'wf.json');
  } catch (error) {
    if (error instanceof WorkflowsFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

const valid = {
  tenants: [
    { id: 'acme', name: 'Acme', channel: 'CACME' },
    { id: 'globex', name: 'Globex', channel: 'CGLOBEX' },
  ],
  workflows: [
    { tenant: 'acme', name: 'nightly-pipeline', cron: '0 2 * * *', timezone: 'UTC', launcher: { kind: 'command', command: 'true' } },
    { tenant: 'acme', name: 'quality-check', cron: '*/5 * * * *' },
    { tenant: 'globex', name: 'quality-check', cron: '0 9 * * 1-5', timezone: 'America/New_York', policy: { retries: 1, minRows: 10 } },
  ],
};

describe('workflows file validation', () => {
  it('accepts the bundled example and a valid file, with defaults filled in', async () => {
    parseWorkflowsFile(await readFile('examples/workflows.json', 'utf8'));
    const file = parseWorkflowsFile(JSON.stringify(valid));
    expect(file.workflows[1]).toMatchObject({ timezone: 'UTC', monitoring: true, paused: false });
  });

  it('names the path, the line and the value of every problem at once', () => {
    const bad = {
      tenants: [{ id: 'acme', name: 'Acme' }],
      workflows: [
        { tenant: 'acme', name: 'a', cron: '61 * * * *' },
        { tenant: 'acme', name: 'b', cron: '0 * * * *', timezone: 'Mars/Olympus' },
        { tenant: 'nobody', name: 'c', cron: '0 * * * *' },
        { tenant: 'acme', name: 'a', cron: '0 * * * *' },
      ],
    };
    const text = JSON.stringify(bad, null, 2);
    const problems = problemsOf(text);
    expect(problems).toHaveLength(4);
    const line = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    expect(problems).toContain(`wf.json:${line('61 * * * *')}: workflows[0].cron: invalid cron: minute "61": 61 is out of range; the minute reads 0-59, *, ranges (1-5), lists (1,3) and steps (*/15) (got "61 * * * *")`);
    expect(problems.find((p) => p.includes('workflows[1].timezone'))).toMatch(new RegExp(`^wf.json:${line('Mars')}: .*IANA.*"Mars/Olympus"`));
    expect(problems.find((p) => p.includes('workflows[2].tenant'))).toContain('unknown tenant (got "nobody")');
    expect(problems.find((p) => p.includes('workflows[3].name'))).toContain('duplicate workflow name in tenant "acme" (got "a")');
  });

  it('rejects unknown fields, wrong types and a managed workflow without a launcher', () => {
    const problems = problemsOf(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme', colour: 'red' }],
        workflows: [{ tenant: 'acme', name: 'x', cron: '* * * * *', mode: 'managed', policy: { retries: 'three' } }],
      }),
    );
    expect(problems.some((p) => p.includes('tenants[0]') && p.includes('unknown field "colour"'))).toBe(true);
    expect(problems.some((p) => p.includes('workflows[0].policy.retries') && p.includes('"three"'))).toBe(true);
    const managed = problemsOf(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'x', cron: '* * * * *', mode: 'managed' }] }));
    expect(managed).toEqual([expect.stringMatching(/workflows\[0\]\.mode: a managed workflow needs a launcher \(got "managed"\)$/)]);
  });

  it('ownershipLapsesAfterReminders: 0 (never) to 100 in a policy; a negative or fractional one is refused', () => {
    const file = (n: number) => JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'x', cron: '* * * * *', policy: { ownershipLapsesAfterReminders: n } }] });
    expect(parseWorkflowsFile(file(0)).workflows[0]!.policy).toEqual({ ownershipLapsesAfterReminders: 0 });
    expect(parseWorkflowsFile(file(5)).workflows[0]!.policy).toEqual({ ownershipLapsesAfterReminders: 5 });
    for (const bad of [-1, 1.5, 101]) expect(problemsOf(file(bad)).some((p) => p.includes('workflows[0].policy.ownershipLapsesAfterReminders'))).toBe(true);
  });

  it('explains a file that is not JSON, naming the line of the mistake', () => {
    expect(problemsOf('{"tenants": [')[0]).toMatch(/^wf.json:1: not valid JSON: .* \(line 1 column 14\)$/);
    // Node 20 says only "at position 131": a trailing comma on line 4 of a long file had to be counted by hand.
    const text = '{\n  "tenants": [{ "id": "acme", "name": "A" }],\n  "workflows": [\n    { "tenant": "acme", "name": "a", "cron": "0 * * * *", }\n  ]\n}';
    expect(problemsOf(text)).toEqual([expect.stringMatching(/^wf.json:4: not valid JSON: .* \(line 4 column 59\)$/)]);
  });

  it('names the line of a mistake Node reports by a snippet alone, on one line, and says a YAML file is not read', () => {
    // Node 20 says `Unexpected token '}', "…tru\n}" is not valid JSON`: no position, and the snippet's newline split the problem over two lines.
    const text = '{\n  "tenants": [],\n  "workflows": [\n    { "tenant": "acme", "name": "a", "cron": "0 * * * *", "paused": tru }\n  ]\n}';
    expect(problemsOf(text)).toEqual([`wf.json:4: not valid JSON: Unexpected token ' ' (line 4 column 72)`]);
    const yaml = 'tenants:\n  - id: acme\n    name: Acme\nworkflows: []\n';
    const problems = problemsOf(yaml);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^wf.json:1: not valid JSON: this looks like YAML; the workflows file is JSON only: convert it \(for example `yq -o=json \. wf\.json`\)$/);
  });

  it('a tenant channel written as its name says that an id is wanted and where to find it', () => {
    const text = JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: '#data-alerts' }], workflows: [] }, null, 2);
    expect(problemsOf(text)).toEqual([
      'wf.json:6: tenants[0].channel: a Slack channel id such as C0123ABCD; a channel name is not one (in Slack, the channel\'s details show its id at the bottom) (got "#data-alerts")',
    ]);
  });

  it('refuses a key written twice in one object, which JSON.parse would settle silently by keeping the last', () => {
    const text = [
      '{',
      '  "tenants": [{ "id": "acme", "name": "Acme" }],',
      '  "workflows": [',
      '    { "tenant": "acme", "name": "nightly", "cron": "0 2 * * *",',
      '      "policy": { "alertAfter": 1 },',
      '      "policy": { "retries": 3 } }',
      '  ]',
      '}',
    ].join('\n');
    expect(problemsOf(text)).toEqual(['wf.json:6: workflows[0].policy: "policy" is given twice in one object; JSON keeps only the last, so remove one']);
    // The same key in different objects is no repetition.
    expect(() => parseWorkflowsFile(JSON.stringify(valid), 'wf.json')).not.toThrow();
  });

  it('never repeats a command launcher environment value or a URL password in a problem', () => {
    const problems = problemsOf(
      JSON.stringify({
        tenants: [{ id: 'acme', name: 'Acme' }],
        workflows: [
          { tenant: 'acme', name: 'a', cron: '0 * * * *', launcher: { kind: 'command', command: 'x', env: { DB_PASSWORD: 1234567890 } } },
          { tenant: 'acme', name: 'b', cron: '0 * * * *', launcher: { kind: 'http', url: 'ftp://deploy:hunter2@ci.example/run?token=abcdef' } },
        ],
      }),
    ).join('\n');
    expect(problems).toContain('workflows[0].launcher.env.DB_PASSWORD: Invalid input: expected string, received number (got "(hidden)")');
    expect(problems).toContain('workflows[1].launcher.url');
    expect(problems).toContain('ftp://***@ci.example/run?token=***');
    expect(problems).not.toMatch(/1234567890|hunter2|abcdef/);
  });

  it('publishes a JSON Schema generated from the same rules', async () => {
    const schema = workflowsFileJsonSchema() as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['tenants', 'workflows']));
    const shipped = JSON.parse(await readFile('examples/workflows.schema.json', 'utf8'));
    expect(shipped).toEqual(JSON.parse(JSON.stringify(schema)));
  });
});

describe('syncing the file into the database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());

  it('upserts, keeps ping keys, disables what was removed and keeps its history', async () => {
    const first = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(valid)), T0, { });
    expect(first.workflows).toEqual({ created: 3, updated: 0, unchanged: 0, removed: 0, changed: [] });
    const before = await t.db.selectFrom('workflows').selectAll().orderBy('id').execute();
    expect(before.map((w) => w.mode)).toEqual(['managed', 'observed', 'observed']);
    expect(before[0]!.nextTickAt).toEqual(new Date('2026-03-11T02:00:00Z'));
    // 09:00 New York on a weekday, after T0 (Tue 10 March 2026, EDT from 8 March).
    expect(before[2]!.nextTickAt).toEqual(new Date('2026-03-10T13:00:00Z'));

    await makeRun(t.db, { workflowId: before[1]!.id, tick: T0, status: 'failed', startedAt: T0, finishedAt: T0, error: 'x' });

    const edited = structuredClone(valid);
    edited.workflows = [edited.workflows[0]!, { ...edited.workflows[2]!, cron: '0 10 * * 1-5' }];
    const second = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(edited)), T0, {});
    expect(second.workflows).toEqual({ created: 0, updated: 1, unchanged: 1, removed: 1, changed: ['globex/quality-check: cron', 'acme/quality-check: removed'] });
    const after = await t.db.selectFrom('workflows').selectAll().orderBy('id').execute();
    expect(after.map((w) => w.enabled)).toEqual([true, false, true]);
    expect(after.map((w) => w.pingKey)).toEqual(before.map((w) => w.pingKey));
    expect(after[2]!.cron).toBe('0 10 * * 1-5');
    expect(after[2]!.nextTickAt).toEqual(new Date('2026-03-10T14:00:00Z'));
    const runs = await t.db.selectFrom('runs').select('id').where('workflowId', '=', before[1]!.id).execute();
    expect(runs).toHaveLength(1);

    // Putting it back re-enables the same row.
    await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(valid)), T0, {});
    const again = await t.db.selectFrom('workflows').select(['id', 'enabled']).orderBy('id').execute();
    expect(again).toEqual(before.map((w) => ({ id: w.id, enabled: true })));
  });

  it('a restart with the same file changes nothing and says so; an edit names what it changed, field by field', async () => {
    const file: { tenants: unknown[]; workflows: Record<string, unknown>[] } = {
      tenants: [{ id: 'same', name: 'Same', channel: 'CSAME' }],
      workflows: [
        { tenant: 'same', name: 'a', cron: '0 2 * * *', policy: { retries: 1, minRows: 10 }, launcher: { kind: 'command', command: 'true', env: { A: '1', B: '2' } } },
        { tenant: 'same', name: 'b', cron: '*/5 * * * *', maintenance: [{ cron: '0 3 * * 0', duration: '1h' }] },
        { tenant: 'same', name: 'c', cron: '0 * * * *' },
      ],
    };
    const first = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(file)), T0, {});
    // The describe's earlier files are removed by this one: only its own three are counted from here.
    expect(first.workflows).toMatchObject({ created: 3, updated: 0, unchanged: 0 });
    const stored = () => t.db.selectFrom('workflows').select(['name', 'updatedAt', 'nextTickAt']).where('tenantId', '=', 'same').orderBy('name').execute();
    const before = await stored();

    // The same definitions, written with the keys of the policy and launcher in another order (jsonb keeps its own order).
    const reordered = structuredClone(file);
    reordered.workflows[0] = { ...file.workflows[0], policy: { minRows: 10, retries: 1 }, launcher: { env: { B: '2', A: '1' }, command: 'true', kind: 'command' } };
    const later = new Date(T0.getTime() + 3600_000);
    const again = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(reordered)), later, {});
    expect(again.workflows).toEqual({ created: 0, updated: 0, unchanged: 3, removed: 0, changed: [] });
    expect(again.tenants).toEqual({ created: 0, updated: 0, unchanged: 1, removed: 0, changed: [] });
    expect(await stored()).toEqual(before);

    const edited = structuredClone(file);
    edited.tenants = [{ id: 'same', name: 'Same Inc', channel: 'CSAME' }];
    edited.workflows = [{ ...file.workflows[0]!, policy: { retries: 2, minRows: 10 } }, { ...file.workflows[1]!, cron: '*/10 * * * *', enabled: false }];
    const third = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(edited)), later, {});
    expect(third.workflows).toEqual({ created: 0, updated: 2, unchanged: 0, removed: 1, changed: ['same/a: policy', 'same/b: cron, enabled', 'same/c: removed'] });
    expect(third.tenants).toEqual({ created: 0, updated: 1, unchanged: 0, removed: 0, changed: ['same: name'] });

    // Upstreams are stored apart (workflow_dependencies): a change of dependsOn alone is an update too.
    const linked = structuredClone(edited);
    linked.workflows[0] = { ...edited.workflows[0]!, dependsOn: ['b'] };
    const fourth = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(linked)), later, {});
    expect(fourth.workflows).toEqual({ created: 0, updated: 1, unchanged: 1, removed: 0, changed: ['same/a: dependsOn'] });
    const fifth = await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(linked)), later, {});
    expect(fifth.workflows).toEqual({ created: 0, updated: 0, unchanged: 2, removed: 0, changed: [] });
  });

  it('stores every time zone of the file by its canonical name, whatever the case typed', async () => {
    const file = {
      tenants: [{ id: 'zones', name: 'Zones', channel: 'CZONES', digest: { cron: '0 9 * * 1-5', timezone: 'europe/london' }, maintenance: [{ cron: '0 3 * * 0', duration: '1h', timezone: 'asia/calcutta' }] }],
      workflows: [
        {
          tenant: 'zones',
          name: 'lower',
          cron: '0 2 * * *',
          timezone: 'europe/berlin',
          policy: { completeBy: { time: '06:00', timeZone: 'EUROPE/BERLIN' } },
          maintenance: [{ cron: '0 1 * * 0', duration: '1h', timezone: 'us/pacific' }],
        },
      ],
    };
    const parsed = parseWorkflowsFile(JSON.stringify(file));
    expect(parsed.workflows[0]).toMatchObject({ timezone: 'Europe/Berlin', policy: { completeBy: { timeZone: 'Europe/Berlin' } }, maintenance: [{ timezone: 'America/Los_Angeles' }] });
    await syncWorkflowsFile(t.db, parsed, T0, {});
    const wf = await t.db.selectFrom('workflows').select(['timezone', 'policy', 'maintenance', 'nextTickAt']).where('tenantId', '=', 'zones').executeTakeFirstOrThrow();
    expect(wf.timezone).toBe('Europe/Berlin');
    expect(wf.nextTickAt).toEqual(new Date('2026-03-11T01:00:00Z'));
    expect(wf.policy.completeBy).toEqual({ time: '06:00', timeZone: 'Europe/Berlin' });
    expect(wf.maintenance.map((m) => m.timezone)).toEqual(['America/Los_Angeles']);
    const tenant = await t.db.selectFrom('tenants').select(['digest', 'maintenance']).where('id', '=', 'zones').executeTakeFirstOrThrow();
    expect(tenant.digest).toEqual({ cron: '0 9 * * 1-5', timezone: 'Europe/London' });
    // Asia/Calcutta is the tzdb's old name (a backward link): stored as Asia/Kolkata.
    expect(tenant.maintenance.map((m) => m.timezone)).toEqual(['Asia/Kolkata']);
  });

  it('stores tenant API tokens only as hashes', async () => {
    const file = structuredClone(valid) as typeof valid & { tenants: { apiTokenEnv?: string }[] };
    file.tenants[0]!.apiTokenEnv = 'ACME_TOKEN';
    await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(file), 'wf.json', { ACME_TOKEN: 'sbt_secret_value_123' }), T0, { ACME_TOKEN: 'sbt_secret_value_123' });
    const tenant = await t.db.selectFrom('tenants').selectAll().where('id', '=', 'acme').executeTakeFirstOrThrow();
    expect(tenant.apiTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(tenant.apiTokenHash).not.toContain('secret');
  });

  it('refuses a tenant API token variable that is unset, empty or too short to be a secret, naming the variable, never its value', () => {
    const file = JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', apiTokenEnv: 'ACME_TOKEN' }], workflows: [] }, null, 2);
    const problems = (env: Record<string, string>) => {
      try {
        parseWorkflowsFile(file, 'wf.json', env);
      } catch (error) {
        return (error as WorkflowsFileError).problems;
      }
      return [];
    };
    // Unset, it used to sync the tenant with no token (or keep the old one), silently.
    expect(problems({})).toEqual(['wf.json:6: tenants[0].apiTokenEnv: names an environment variable that is not set (got "ACME_TOKEN")']);
    expect(problems({ ACME_TOKEN: '' })).toEqual(['wf.json:6: tenants[0].apiTokenEnv: names an environment variable that is not set (got "ACME_TOKEN")']);
    expect(problems({ ACME_TOKEN: 'abc' })).toEqual([
      'wf.json:6: tenants[0].apiTokenEnv: the variable\'s value is not valid: a tenant API token must be at least 16 characters (got "ACME_TOKEN")',
    ]);
    expect(problems({ ACME_TOKEN: 'sbt_secret_value_123' })).toEqual([]);
  });

  it('stores a tenant\'s rights, on-call and ownership expiry; a file without them clears them', async () => {
    const file = structuredClone(valid) as unknown as { tenants: Record<string, unknown>[] };
    Object.assign(file.tenants[0]!, { rights: { responders: ['SOPS'], admins: ['ULEAD'] }, oncall: { group: 'SONCALL', users: ['UPAGER'] }, ownershipExpiresAfter: '8h' });
    await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(file)), T0, {});
    const acme = await t.db.selectFrom('tenants').selectAll().where('id', '=', 'acme').executeTakeFirstOrThrow();
    expect(acme.rights).toEqual({ responders: ['SOPS'], admins: ['ULEAD'] });
    expect(acme.oncall).toEqual({ group: 'SONCALL', users: ['UPAGER'] });
    expect(acme.ownershipExpiresAfterSeconds).toBe(8 * 3600);
    await syncWorkflowsFile(t.db, parseWorkflowsFile(JSON.stringify(valid)), T0, {});
    const cleared = await t.db.selectFrom('tenants').selectAll().where('id', '=', 'acme').executeTakeFirstOrThrow();
    expect([cleared.rights, cleared.oncall, cleared.ownershipExpiresAfterSeconds]).toEqual([{}, {}, null]);
  });

  it('names the field and value of a bad on-call, rights or expiry entry', () => {
    const file = structuredClone(valid) as unknown as { tenants: Record<string, unknown>[] };
    Object.assign(file.tenants[0]!, { rights: { admins: ['alice'] }, oncall: { group: 'U123' }, ownershipExpiresAfter: 'soon' });
    const problems = problemsOf(JSON.stringify(file, null, 2)).join('\n');
    expect(problems).toContain('tenants[0].rights.admins[0]');
    expect(problems).toContain('tenants[0].oncall.group');
    expect(problems).toMatch(/tenants\[0\]\.ownershipExpiresAfter.*"soon"/);
  });
});

describe('one enabled tenant per channel', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());
  const channels = () => t.db.selectFrom('tenants').select(['id', 'channel', 'enabled']).orderBy('id').execute();
  const fileWith = (tenants: { id: string; channel?: string }[]) => parseWorkflowsFile(JSON.stringify({ tenants: tenants.map((x) => ({ name: x.id, ...x })), workflows: [] }));
  async function syncProblems(file: ReturnType<typeof fileWith>, routing?: { PLATFORM_CHANNEL: string }): Promise<string[]> {
    try {
      await syncWorkflowsFile(t.db, file, T0, {}, routing);
    } catch (error) {
      if (error instanceof WorkflowsFileError) return error.problems;
      throw error;
    }
    throw new Error('expected the sync to be refused');
  }

  it('the database refuses two enabled tenants on one channel (partial unique index)', async () => {
    await syncWorkflowsFile(t.db, fileWith([{ id: 'a', channel: 'CONE' }]), T0, {});
    await expect(t.db.insertInto('tenants').values({ id: 'sneaky', name: 'S', channel: 'CONE', source: 'api', enabled: true, createdAt: T0, updatedAt: T0 } as never).execute()).rejects.toThrow(/tenants_channel/);
  });

  it('file tenants may swap or shift their channels in one edit', async () => {
    await syncWorkflowsFile(t.db, fileWith([{ id: 'a', channel: 'CONE' }, { id: 'b', channel: 'CTWO' }]), T0, {});
    await syncWorkflowsFile(t.db, fileWith([{ id: 'a', channel: 'CTWO' }, { id: 'b', channel: 'CONE' }]), T0, {});
    expect(await channels()).toEqual([{ id: 'a', channel: 'CTWO', enabled: true }, { id: 'b', channel: 'CONE', enabled: true }]);
    await syncWorkflowsFile(t.db, fileWith([{ id: 'a', channel: 'CONE' }, { id: 'b', channel: 'CTHREE' }]), T0, {});
    expect(await channels()).toEqual([{ id: 'a', channel: 'CONE', enabled: true }, { id: 'b', channel: 'CTHREE', enabled: true }]);
  });

  it("a file tenant naming the channel of a tenant managed over the API is a config error naming the field and value; nothing changes", async () => {
    await syncWorkflowsFile(t.db, fileWith([{ id: 'a', channel: 'CONE' }]), T0, {});
    await t.db.insertInto('tenants').values({ id: 'viaapi', name: 'Via API', channel: 'CAPI', source: 'api', enabled: true, createdAt: T0, updatedAt: T0 } as never).execute();
    const before = await channels();
    const problems = await syncProblems(fileWith([{ id: 'a', channel: 'CONE' }, { id: 'b', channel: 'CAPI' }]));
    expect(problems).toEqual([expect.stringMatching(/tenants\[1\]\.channel: .*tenant "viaapi".*\(got "CAPI"\)$/)]);
    expect(await channels()).toEqual(before);
    await t.db.deleteFrom('tenants').where('id', '=', 'viaapi').execute();
  });

  it('a file tenant naming the platform channel is a config error', async () => {
    const problems = await syncProblems(fileWith([{ id: 'a', channel: 'CPLAT' }]), { PLATFORM_CHANNEL: 'CPLAT' });
    expect(problems).toEqual([expect.stringMatching(/tenants\[0\]\.channel: .*PLATFORM_CHANNEL.*\(got "CPLAT"\)$/)]);
  });
});

describe('pausing through the file', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());

  it('resumes from the next tick to come, neither firing nor missing what fell while paused', async () => {
    const file = (paused: boolean) =>
      parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'hourly', cron: '0 * * * *', paused }] }));
    await syncWorkflowsFile(t.db, file(false), T0, {});
    await syncWorkflowsFile(t.db, file(true), new Date('2026-03-10T02:30:00Z'), {});
    await syncWorkflowsFile(t.db, file(false), new Date('2026-03-10T06:30:00Z'), {});
    const wf = await t.db.selectFrom('workflows').selectAll().executeTakeFirstOrThrow();
    expect(wf.paused).toBe(false);
    expect(wf.nextTickAt).toEqual(new Date('2026-03-10T07:00:00Z'));
  });
});
