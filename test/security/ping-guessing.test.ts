import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from 'node:http';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { UnknownPingLimiter } from '../../src/http/unknown-ping-limiter.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow, T0 } from '../helpers/factories.js';

/** Guessing ping keys from fresh addresses: an IPv6 host holds a /64, so each of its addresses must share one allowance. */
describe('unknown ping keys per client', () => {
  it('addresses of one IPv6 /64 share the allowance; another /64 and an IPv4 client have their own', () => {
    const limiter = new UnknownPingLimiter(3);
    const now = 1_000_000;
    for (let i = 1; i <= 3; i++) expect(limiter.admit(`2001:db8:7:9::${i.toString(16)}`, `guess-${i}`, now).ok).toBe(true);
    expect(limiter.admit('2001:db8:7:9:dead:beef:1:2', 'guess-4', now)).toMatchObject({ ok: false });
    expect(limiter.admit('2001:db8:7:a::1', 'guess-4', now).ok).toBe(true);
    for (let i = 0; i < 3; i++) limiter.admit('::ffff:198.51.100.4', `guess-${i}`, now);
    expect(limiter.admit('198.51.100.4', 'guess-9', now)).toMatchObject({ ok: false });
    expect(limiter.admit('198.51.100.5', 'guess-9', now).ok).toBe(true);
  });

  it('a valid key gives its token back, and once shown is answered over the allowance; a valid key not shown from there is not', () => {
    const limiter = new UnknownPingLimiter(2);
    for (let i = 0; i < 10; i++) {
      const admission = limiter.admit('198.51.100.9', 'job-key', 5_000);
      expect(admission).toEqual({ ok: true, reserved: i === 0 });
      limiter.proven('198.51.100.9', 'job-key', admission, 5_000);
    }
    expect(limiter.admit('198.51.100.9', 'guess-1', 5_000).ok).toBe(true);
    expect(limiter.admit('198.51.100.9', 'guess-2', 5_000).ok).toBe(true);
    expect(limiter.admit('198.51.100.9', 'guess-3', 5_000).ok).toBe(false);
    expect(limiter.admit('198.51.100.9', 'job-key', 5_000)).toEqual({ ok: true, reserved: false });
    expect(limiter.admit('198.51.100.9', 'other-valid-key', 5_000).ok).toBe(false);
    // A key whose workflow went away takes the allowance again.
    limiter.forget('198.51.100.9', 'job-key');
    expect(limiter.admit('198.51.100.9', 'job-key', 5_000).ok).toBe(false);
  });
});

/**
 * The allowance must hold however the guesses arrive. Checked before the key
 * lookup and charged after it, every guess of a burst sent at once passed the
 * check before the first was charged: 200 guesses on 200 connections were all
 * answered (404), whatever PING_UNKNOWN_PER_MINUTE said.
 */
describe('unknown ping keys sent all at once', () => {
  let t: TestDatabase;
  let app: Awaited<ReturnType<typeof startTestApp>>;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    t = await createTestDatabase();
    await makeTenant(t.db, { id: 'acme', name: 'Acme' });
    app = await startTestApp(t, { PING_UNKNOWN_PER_MINUTE: '5' }, { clock });
  });
  afterAll(async () => {
    await app?.stop();
    await t?.drop();
  });

  it('a burst of 200 guesses on as many connections gets at most the allowance answered; a job that pinged from that address before still gets through', async () => {
    // Each on a connection of its own, all sent before any is answered.
    const statusOf = (path: string) =>
      new Promise<number>((resolve, reject) => {
        get(`${app.url}${path}`, { agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
    const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'pinged', cron: '0 2 * * *' });
    expect(await statusOf(`/ping/${wf.pingKey}`)).toBe(200);
    // The key lookups are held up (the workflows table locked) while the burst arrives, as on a busy database.
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const held = t.db.transaction().execute(async (trx) => {
      await sql`lock table workflows in access exclusive mode`.execute(trx);
      locked();
      await new Promise<void>((r) => (release = r));
    });
    await isLocked;
    const answers: number[] = [];
    const burst = Promise.all(Array.from({ length: 200 }, (_, i) => statusOf(`/ping/burst-guess-${i}-0123456789abcdefgh/fail`).then((s) => answers.push(s))));
    // Over the allowance the answer needs no lookup: 195 are refused while the lookups wait.
    await eventually(() => expect(answers.filter((s) => s === 429)).toHaveLength(195)).finally(() => release());
    await Promise.all([burst, held]);
    expect(answers.filter((s) => s === 404)).toHaveLength(5);
    expect(answers.filter((s) => s === 429)).toHaveLength(195);
    expect(await Promise.all(Array.from({ length: 20 }, () => statusOf(`/ping/${wf.pingKey}`)))).toEqual(Array(20).fill(200));
    clock.advance(12_000);
    expect(await statusOf('/ping/after-the-burst-0123456789abcdef')).toBe(404);
    expect(await statusOf('/ping/after-the-burst-1123456789abcdef')).toBe(429);
  });
});
