import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';
import { apiClient } from '../helpers/http-api.js';
import { insertAlert } from '../helpers/slack-outbox.js';

/** One `curl` of docs/api.md's walkthrough, with the status the page promises. */
interface Example {
  line: string;
  method: string;
  url: string;
  auth: 'ADMIN' | 'AUTH';
  body?: string;
  /** `# → 400 …` after it; else `-f` promises a 2xx. */
  expected: number | '2xx';
  /** The field names of the answer the page shows, if it shows one. */
  fields: string[];
}

function examples(): Example[] {
  const page = readFileSync('docs/api.md', 'utf8');
  const block = /^```sh\n(API=[\s\S]*?)^```/m.exec(page)![1]!;
  const lines = block.replace(/\\\n\s*/g, ' ').split('\n');
  const out: Example[] = [];
  lines.forEach((line, i) => {
    if (!line.includes('curl ')) return;
    const shown = lines.slice(i + 1).find((l) => !l.includes('curl ') && /^# → \d{3}/.test(l));
    const next = lines[i + 1] ?? '';
    const promised = /^# → (\d{3})/.exec(next);
    const body = /-d '([^']*)'/.exec(line)?.[1];
    out.push({
      line,
      method: /-X (\w+)/.exec(line)?.[1] ?? (body ? 'POST' : 'GET'),
      url: /"\$API([^"]*)"/.exec(line)![1]!,
      auth: line.includes('"$ADMIN"') ? 'ADMIN' : 'AUTH',
      body,
      expected: promised ? Number(promised[1]) : '2xx',
      fields: promised && shown === next ? [...next.matchAll(/"(\w+)":/g)].map((m) => m[1]!) : [],
    });
    if (!promised && !/curl -f/.test(line)) throw new Error(`docs/api.md: neither -f nor "# → status" after: ${line}`);
  });
  return out;
}

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
let alertId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  // The page's run lands on the 02:05 tick of a five-minute check.
  const clock = new ManualClock('2026-03-10T02:05:20Z');
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  // What the walkthrough takes as given: the workflows it runs, pauses and reads (made with the admin token).
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'C0123ACME', source: 'api' });
  const admin = apiClient(app.url, ADMIN);
  expect((await admin('PUT', '/api/v1/workflows/acme/quality-check', { cron: '*/5 * * * *' })).status).toBe(201);
  expect((await admin('PUT', '/api/v1/workflows/acme/nightly-pipeline', { cron: '0 2 * * *', launcher: { kind: 'command', command: 'true' } })).status).toBe(201);
  const wf = await t.db.selectFrom('workflows').select('id').where('name', '=', 'quality-check').executeTakeFirstOrThrow();
  alertId = (await insertAlert(t.db, wf.id)).id;
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

describe('docs/api.md', () => {
  it('every curl of the walkthrough answers the status the page gives it, with the fields it shows', async () => {
    const all = examples();
    expect(all.length).toBeGreaterThan(20);
    let token = '';
    let runId = 0;
    const wrong: string[] = [];
    for (const ex of all) {
      // The page's ids (run 812, alert 77) are this database's.
      const url = ex.url.replace('/runs/812', `/runs/${runId}`).replace('/alerts/77', `/alerts/${alertId}`);
      const call = apiClient(app.url, ex.auth === 'ADMIN' ? ADMIN : token);
      // curl -d sends application/x-www-form-urlencoded; the API reads the body as JSON whatever it is called.
      const answer = await call(ex.method, `/api/v1${url}`, ex.body, ex.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {});
      const ok = ex.expected === '2xx' ? answer.status >= 200 && answer.status < 300 : answer.status === ex.expected;
      if (!ok) wrong.push(`${ex.line}\n  → ${answer.status} ${answer.text.slice(0, 300)}`);
      const missing = ex.fields.filter((f) => !answer.text.includes(`"${f}":`));
      if (missing.length) wrong.push(`${ex.line}\n  → the page shows ${missing.join(', ')}, the answer has none: ${answer.text.slice(0, 300)}`);
      if (ex.line.startsWith('TOKEN=')) token = answer.body.token;
      if (ex.method === 'POST' && url === '/runs' && answer.status === 201) runId = answer.body.id;
    }
    expect(wrong).toEqual([]);
  });

  it('every ping URL of the table answers OK, by GET and by POST; a bad one 400, an unknown key 404', async () => {
    const page = readFileSync('docs/api.md', 'utf8');
    const urls = [...page.matchAll(/^\| `(\/ping\/\{key\}[^`]*)` \|/gm)].map((m) => m[1]!);
    expect(urls).toEqual(['/ping/{key}/start', '/ping/{key}', '/ping/{key}/fail', '/ping/{key}/{exitCode}']);
    const view = await apiClient(app.url, ADMIN)('GET', '/api/v1/workflows/acme/quality-check');
    const key = String(view.body.ping.url).split('/ping/')[1]!;
    for (const method of ['GET', 'POST']) {
      for (const url of urls) {
        const answer = await fetch(`${app.url}${url.replace('{key}', key).replace('{exitCode}', '3')}`, { method });
        expect([url, method, answer.status, (await answer.text()).trim()]).toEqual([url, method, 200, 'OK']);
      }
    }
    expect((await fetch(`${app.url}/ping/${key}/256`)).status).toBe(400);
    expect((await fetch(`${app.url}/ping/${'x'.repeat(22)}`)).status).toBe(404);
  });
});
