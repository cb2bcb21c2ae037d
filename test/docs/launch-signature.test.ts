import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createHttpLauncher } from '../../src/launch/http-launcher.js';
import { HeldRuns } from '../../src/ledger/run-leases.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makeRun, makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startHttpTarget } from '../helpers/http-target.js';
import { eventually, replicaDeps } from '../runs/support.js';

/**
 * What docs/launchers.md tells a receiver holds for the request the launcher
 * really sends: its JSON example has the body's fields, and its Node snippet,
 * run as printed, accepts the signature and refuses a changed body, another
 * secret and a stale timestamp.
 */

const SECRET = 'docs-launch-secret-0123456789';
const page = readFileSync('docs/launchers.md', 'utf8');

/** The page's `verifyLaunch`, as printed (its import line given as parameters). */
function documentedVerifier(): (secret: string, rawBody: string, timestamp: unknown, signature: unknown, nowMs: number) => boolean {
  const block = /^```js\n([\s\S]*?)^```/m.exec(page)?.[1];
  if (!block) throw new Error('docs/launchers.md has no ```js block');
  const code = block.replace(/^import .*$/m, '').replace(/^verifyLaunch\(process\.env.*$/m, '');
  return new Function('createHmac', 'timingSafeEqual', `${code}\nreturn verifyLaunch;`)(createHmac, timingSafeEqual);
}

let t: TestDatabase;
let target: Awaited<ReturnType<typeof startHttpTarget>>;
const clock = new ManualClock('2026-03-10T02:00:00Z');
beforeAll(async () => {
  t = await createTestDatabase();
  target = await startHttpTarget(() => ({ status: 202 }));
  await makeTenant(t.db);
});
afterAll(async () => {
  await target.stop();
  await t.drop();
});

describe('the launch request as docs/launchers.md documents it', () => {
  it('has the fields of the example and a signature the printed snippet verifies', async () => {
    const launcher = createHttpLauncher(replicaDeps(t.db, clock, { PUBLIC_URL: 'https://bot.example.com' }), new HeldRuns());
    const workflow = await makeWorkflow(t.db, { mode: 'managed', launcher: JSON.stringify({ kind: 'http', url: `${target.url}/run`, mode: 'callback', secret: SECRET, operatorSet: true }) });
    const run = await makeRun(t.db, { workflowId: workflow.id, tick: at('2026-03-10T01:00:00Z'), status: 'running', finishedAt: null });
    await launcher.launch({ runId: run.id, workflow, tenant: { id: 'acme', name: 'Acme' }, tick: run.tick, attempt: 1, trigger: 'schedule', timeoutSeconds: 3600 });
    const request = await eventually(() => target.received.find((r) => JSON.parse(r.body).runId === run.id));

    const example = /^```json\n(\{ "runId"[\s\S]*?)^```/m.exec(page)?.[1];
    expect(Object.keys(JSON.parse(request.body)).sort()).toEqual(Object.keys(JSON.parse(example!)).sort());

    const verifyLaunch = documentedVerifier();
    const timestamp = request.headers['x-scheduler-timestamp'];
    const signature = request.headers['x-scheduler-signature'];
    const now = clock.now().getTime();
    expect(verifyLaunch(SECRET, request.body, timestamp, signature, now)).toBe(true);
    expect(verifyLaunch(SECRET, request.body.replace('"attempt":1', '"attempt":2'), timestamp, signature, now)).toBe(false);
    expect(verifyLaunch('another-secret-0123456789', request.body, timestamp, signature, now)).toBe(false);
    expect(verifyLaunch(SECRET, request.body, timestamp, signature, now + 301_000)).toBe(false);
    expect(verifyLaunch(SECRET, request.body, undefined, signature, now)).toBe(false);
  });
});
