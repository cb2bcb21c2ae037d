import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startTestApp } from './helpers/app.js';
import { createDb, createPool } from '../src/db/connect.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(2);
});
afterAll(async () => t.drop());

describe('health endpoints', () => {
  it('report ready while the database answers, and not ready when it does not', async () => {
    const app = await startTestApp(t);
    try {
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    } finally {
      await app.stop();
    }
    // A replica whose database is unreachable is alive but not ready.
    const unreachable = createDb(createPool('postgres://postgres@127.0.0.1:1/none', 1));
    const down = await startTestApp({ db: unreachable, url: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      expect((await fetch(`${down.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${down.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).database).not.toBe('ok');
    } finally {
      await down.stop();
      await unreachable.destroy();
    }
  });
});
