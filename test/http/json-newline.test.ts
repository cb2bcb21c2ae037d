import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/** `curl …/api/v1/…` left the prompt on the answer's last line: every JSON answer ends with one newline (valid JSON either way). */
let t: TestDatabase;
let app: Awaited<ReturnType<typeof startTestApp>>;
const ADMIN = 'admin-token-json-newline-0123456789';

beforeAll(async () => {
  t = await createTestDatabase();
  app = await startTestApp(t, { API_TOKEN: ADMIN });
});
afterAll(async () => {
  await app.stop();
  await t.drop();
});

it('answers, refusals and errors alike end with exactly one newline, and still parse as JSON', async () => {
  const answers = await Promise.all([
    fetch(`${app.url}/healthz`),
    fetch(`${app.url}/api/v1/tenants`, { headers: { authorization: `Bearer ${ADMIN}` } }),
    fetch(`${app.url}/api/v1/tenants`, { headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } }),
    fetch(`${app.url}/api/v1/runs`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"tenant":' }),
    fetch(`${app.url}/nowhere`),
  ]);
  expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 400, 404]);
  for (const answer of answers) {
    expect(answer.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8$/);
    const text = await answer.text();
    expect(text).toMatch(/[}\]]\n$/);
    expect(text.endsWith('\n\n')).toBe(false);
    expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(() => JSON.parse(text)).not.toThrow();
  }
});
