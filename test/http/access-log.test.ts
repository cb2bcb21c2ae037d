import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loggablePath } from '../../src/domain/ping-keys.js';
import { createLogger } from '../../src/log.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually } from '../helpers/eventually.js';

/** With LOG_LEVEL=debug each request answered is one line; a ping's key never appears in it. */
let t: TestDatabase;
const lines: { level: number; msg: string; method?: string; path?: string; status?: number }[] = [];
let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
  const logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
  app = await startTestApp(t, { API_TOKEN: 'admin-token-access-log-0123456789' }, { clock: new ManualClock('2026-03-10T02:00:30Z'), logger });
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

const requests = () => lines.filter((l) => l.msg === 'http request');

describe('the access log', () => {
  it('one debug line per request: method, path with the ping key hidden and no query, status', async () => {
    const wf = await makeWorkflow(t.db, { cron: '*/5 * * * *', mode: 'observed' });
    await fetch(`${app.url}/ping/${wf.pingKey}/fail?rid=abc123`, { method: 'POST', body: 'boom' });
    await fetch(`${app.url}/api/v1/workflows`, { headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } });
    const seen = await eventually(() => (requests().length >= 2 ? requests() : Promise.reject(new Error("not logged yet"))));
    expect(seen.map((l) => [l.level, l.method, l.path, l.status])).toEqual([
      [20, 'POST', '/ping/(hidden)/fail', 200],
      [20, 'GET', '/api/v1/workflows', 401],
    ]);
    expect(JSON.stringify(lines)).not.toContain(wf.pingKey!);
  });

  it('loggablePath hides a ping URL\'s key however the path ends, and nothing else', () => {
    expect(loggablePath('/ping/k3y-0123456789abcdefghij')).toBe('/ping/(hidden)');
    expect(loggablePath('/ping/k3y-0123456789abcdefghij/start?rid=1')).toBe('/ping/(hidden)/start');
    expect(loggablePath('/api/v1/runs/12?status=failed#x')).toBe('/api/v1/runs/12');
    expect(loggablePath('/slack/events')).toBe('/slack/events');
  });
});
