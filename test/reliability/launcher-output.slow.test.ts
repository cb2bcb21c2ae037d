import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { finishedRun, replicaDeps } from '../runs/support.js';

/**
 * A command printing gigabytes: the replica keeps only the tail (8 KB), so
 * its memory does not grow with the output, and the run still ends with the
 * last thing printed. Slow: it pushes 2 GB through a pipe.
 */

let t: TestDatabase;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  await makeTenant(t.db);
});
afterAll(async () => {
  await t.drop();
});

describe('a command printing gigabytes', () => {
  it('costs the replica no memory to speak of, and its tail and last line are kept', async () => {
    const launcher = createCommandLauncher(replicaDeps(t.db, clock), new HeldRuns());
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'head -c 2147483648 /dev/zero | tr "\\0" "y"; echo; echo "ERROR: out of disk" >&2; exit 5' }) });
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 600 });
      const done = await finishedRun(t.db, run.id, 300_000);
      expect(done).toMatchObject({ status: 'failed', exitCode: 5, error: 'exited with code 5: ERROR: out of disk' });
      expect(done.logExcerpt).toMatch(/^\[… 21474\d{5} earlier bytes not kept\]\ny+\nERROR: out of disk\n$/);
      expect(Buffer.byteLength(done.logExcerpt!)).toBeLessThan(8 * 1024 + 64);
    } finally {
      clearInterval(sampler);
    }
    // 2 GB went through; the replica grew by a small fraction of it (streams' buffers, the GC's slack).
    expect(peak - before).toBeLessThan(256 * 1024 * 1024);
  }, 300_000);
});
