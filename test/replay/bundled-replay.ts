import { afterEach } from 'vitest';
import { replayScenario, type ReplayResult } from '../../src/replay/replay-scenario.js';
import { readScenario } from '../../src/replay/scenario.js';
import type { Db } from '../../src/db/connect.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Replays a bundled scenario (`examples/scenarios/<file>`) through the real
 * engine, each in a fresh database dropped after the test. Call it once at the
 * top of a test file: it registers the `afterEach`.
 */
export function bundledReplay(): { replay: (file: string) => Promise<ReplayResult>; db: () => Db } {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.drop();
    t = undefined;
  });
  return {
    replay: async (file) => {
      t = await createTestDatabase();
      return replayScenario(await readScenario(`examples/scenarios/${file}`), { db: t.db });
    },
    /** The database of this test's replay. */
    db: () => {
      if (!t) throw new Error('no scenario replayed in this test yet');
      return t.db;
    },
  };
}
