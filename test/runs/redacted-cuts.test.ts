import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Workflow } from '../../src/db/schema.js';
import { createCommandLauncher } from '../../src/launch/command-launcher.js';
import { createHttpLauncher } from '../../src/launch/http-launcher.js';
import { OutputTail } from '../../src/launch/output-tail.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { rememberSecrets } from '../../src/secrets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { finishedRun, replicaDeps } from './support.js';

/**
 * Run output is cut to fit (the last 8 KB, the last line's first 500
 * characters, the answer's first line): a secret the cut goes through must
 * not leave its other half behind, where no redactor recognises it. Secrets
 * are taken out before anything is cut.
 */

const SECRET = 'Zq7-secret-value-of-the-operator-0123456789';
/** What must never be stored: any 8 characters in a row of the secret. */
const fragments = Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8));
const leaks = (text: string | null) => fragments.filter((f) => text?.includes(f));

let t: TestDatabase;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget();
  await makeTenant(t.db);
  rememberSecrets([SECRET]);
});
afterAll(async () => {
  await target.stop();
  await t.drop();
});

async function runCommand(command: string, tailBytes?: number) {
  const launcher = createCommandLauncher(replicaDeps(t.db, clock), new HeldRuns(), tailBytes ? { tailBytes } : {});
  const workflow: Workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'command', command }) });
  const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
  await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 30 });
  return finishedRun(t.db, run.id);
}

describe('secrets in output that is cut to fit', () => {
  it('a long last line cut at 500 characters through the secret: the error keeps no part of it', async () => {
    const done = await runCommand(`printf '%0490d' 0; echo " ${SECRET} tail"; exit 2`);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^exited with code 2: 0{490} \[redacted/);
    expect(leaks(done.error)).toEqual([]);
    expect(leaks(done.logExcerpt)).toEqual([]);
  });

  it('the kept tail starting inside the secret: the excerpt keeps no part of it', async () => {
    // 4,000 bytes of tail: the secret's last bytes fall inside it, its first ones before it.
    const done = await runCommand(`echo "${SECRET}"; printf '%03980d\\n' 0`, 4000);
    expect(done.status).toBe('succeeded');
    expect(done.logExcerpt).toMatch(/^\[… \d+ earlier bytes not kept\]\n/);
    expect(leaks(done.logExcerpt)).toEqual([]);
  });

  it('OutputTail still keeps exactly its limit of the newest output', () => {
    const tail = new OutputTail(10);
    tail.write(Buffer.from('0123456789abcdefghij'));
    expect(tail.text()).toBe('[… 10 earlier bytes not kept]\nabcdefghij');
    const short = new OutputTail(10);
    short.write(Buffer.from('abc'));
    expect(short.text()).toBe('abc');
  });

  it('an http answer cut at its size limit through the secret, and its first line: no part of it is kept', async () => {
    const launcher = createHttpLauncher(replicaDeps(t.db, clock, { LAUNCHER_SECRET: 'launcher-secret-0123456789' }), new HeldRuns(), { excerptBytes: 1000 });
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}/run`, mode: 'sync', operatorSet: true }) });
    target.respondWith(() => ({ status: 500, body: `${'e'.repeat(290)} ${SECRET} then ${'x'.repeat(640)} ${SECRET} more\nsecond line` }));
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T02:00:00Z'), status: 'running', finishedAt: null });
    await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 30 });
    const done = await finishedRun(t.db, run.id);
    expect(done.error).toMatch(/^HTTP 500: e{290} \[redacted/);
    expect(leaks(done.error)).toEqual([]);
    expect(leaks(done.logExcerpt)).toEqual([]);
    expect(done.logExcerpt).toMatch(/\[… truncated\]$/);
  });
});
