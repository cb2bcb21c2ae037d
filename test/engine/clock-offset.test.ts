import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/clock.js';
import { clockBackWithin, clockOffBy, clockOffsetOf } from '../../src/domain/clock-offset.js';
import { createUptimeHeartbeat } from '../../src/engine/uptime.js';
import { createLogger } from '../../src/log.js';
import { metrics } from '../../src/metrics.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * A replica whose clock is off: every decision uses its own clock, and other
 * replicas judge the leases it writes by theirs (docs/reliability.md, Clocks).
 * It says so before that matters. The clock here is the machine's, moved by
 * a set offset; the margins (minutes against a 5 s limit) make no verdict
 * depend on how fast the machine is.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

function replica(clock: Clock) {
  const lines: { level: number; msg: string; offsetSeconds?: number }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { heartbeat: createUptimeHeartbeat({ db: t.db, replicaId: `r-${Math.random()}`, logger, clock }), lines };
}
const offsetClock = (offsetMs: { ms: number }): Clock => ({ wall: true, now: () => new Date(Date.now() + offsetMs.ms), sleep: systemClock.sleep });

describe("a replica's clock against the database's", () => {
  it('two minutes ahead: told once as an error, the gauge set; back in step: told once more', async () => {
    const offset = { ms: 120_000 };
    const r = replica(offsetClock(offset));
    for (let i = 0; i < 3; i++) await r.heartbeat.beat(new Date());
    const errors = r.lines.filter((l) => l.level >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(/^this replica's clock is 1[12]\d\.\d s ahead of the database's: .*synchronise it \(NTP\)$/);
    expect((await metrics.clockOffset.get()).values[0]!.value).toBeGreaterThan(100);
    offset.ms = 0;
    await r.heartbeat.beat(new Date());
    expect(r.lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual(["this replica's clock is back within 5 s of the database's"]);
  });

  it('behind, said so; in step, nothing; a clock that is not the wall clock (a test\'s, the replay\'s) is never compared', async () => {
    const behind = replica(offsetClock({ ms: -300_000 }));
    await behind.heartbeat.beat(new Date());
    expect(behind.lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([expect.stringMatching(/^this replica's clock is -\d+\.\d s behind the database's/)]);
    const inStep = replica(offsetClock({ ms: 0 }));
    await inStep.heartbeat.beat(new Date());
    expect(inStep.lines).toEqual([]);
    const manual = replica({ now: () => new Date('2026-03-10T02:00:00Z'), sleep: systemClock.sleep });
    await manual.heartbeat.beat(new Date('2026-03-10T02:00:00Z'));
    expect(manual.lines).toEqual([]);
  });
});

describe('clockOffsetOf: known to within half the round trip', () => {
  it('tells only an offset surely beyond the limit, and back only when surely within it', () => {
    expect(clockOffsetOf(1_000, 500, 1_200)).toEqual({ offsetMs: 600, uncertaintyMs: 100 });
    // 6 s off but measured across a 4 s round trip: maybe only 4 s. Not told.
    expect(clockOffBy(clockOffsetOf(10_000, 6_000, 14_000))).toBe(false);
    expect(clockOffBy(clockOffsetOf(10_000, 3_000, 10_100))).toBe(true);
    expect(clockOffBy(clockOffsetOf(0, 7_000, 100))).toBe(true);
    expect(clockBackWithin(clockOffsetOf(10_000, 6_000, 10_100))).toBe(true);
    expect(clockBackWithin(clockOffsetOf(10_000, 4_000, 12_000))).toBe(false);
  });
});
