import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ManualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { apiClient } from '../helpers/http-api.js';
import { makeRun } from '../helpers/factories.js';
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

beforeAll(async () => {
  t = await createTestDatabase();
  // The page's run lands on the 02:05 tick of a five-minute check.
  const clock = new ManualClock('2026-03-10T02:05:20Z');
  app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock });
  // What the walkthrough is run against: `npm start` with API_TOKEN set, so the bundled example, synced as at start.
  await syncWorkflowsFile(t.db, parseWorkflowsFile(readFileSync('examples/workflows.json', 'utf8')), clock.now(), {});
  // The example's flaky-export fails every minute and opens an alert within minutes of the start: the page reads both.
  const wf = await t.db.selectFrom('workflows').select('id').where('name', '=', 'flaky-export').executeTakeFirstOrThrow();
  const tick = new Date('2026-03-10T02:04:00Z');
  await makeRun(t.db, { workflowId: wf.id, tick, status: 'failed', startedAt: tick, finishedAt: new Date(tick.getTime() + 1000), error: 'exited with code 2' });
  await insertAlert(t.db, wf.id);
});
afterAll(async () => {
  await app?.stop();
  await t?.drop();
});

describe('docs/api.md', () => {
  it('every curl of the walkthrough answers the status the page gives it, with the fields it shows', async () => {
    const all = examples();
    expect(all.length).toBeGreaterThan(20);
    // What the page's shell keeps from one answer for the next lines: TOKEN, RUN, ALERT (`X=$(curl … | jq <path>)`).
    const vars: Record<string, string> = {};
    const wrong: string[] = [];
    for (const ex of all) {
      const url = ex.url.replace(/\$([A-Z]+)\b/g, (whole, name: string) => vars[name] ?? whole);
      const call = apiClient(app.url, ex.auth === 'ADMIN' ? ADMIN : vars.TOKEN);
      // curl -d sends application/x-www-form-urlencoded; the API reads the body as JSON whatever it is called.
      const answer = await call(ex.method, `/api/v1${url}`, ex.body, ex.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {});
      const ok = ex.expected === '2xx' ? answer.status >= 200 && answer.status < 300 : answer.status === ex.expected;
      if (!ok) wrong.push(`${ex.line}\n  → ${answer.status} ${answer.text.slice(0, 300)}`);
      const missing = ex.fields.filter((f) => !answer.text.includes(`"${f}":`));
      if (missing.length) wrong.push(`${ex.line}\n  → the page shows ${missing.join(', ')}, the answer has none: ${answer.text.slice(0, 300)}`);
      const kept = /^(\w+)=\$\(curl .*\| jq (?:-r )?'?([.\w[\]]+)'?\)$/.exec(ex.line);
      if (kept) {
        const value = (kept[2]!.match(/\w+/g) ?? []).reduce<any>((at, key) => at?.[key], answer.body);
        if (value === undefined || value === null) wrong.push(`${ex.line}\n  → jq ${kept[2]} finds nothing in ${answer.text.slice(0, 300)}`);
        vars[kept[1]!] = String(value);
      }
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
