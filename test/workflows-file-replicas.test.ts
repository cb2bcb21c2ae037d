import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseWorkflowsFile } from '../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../src/services/sync-workflows.js';
import { markFileSyncsStopped } from '../src/services/file-sync-order.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { T0 } from './helpers/factories.js';

/**
 * Replicas sharing one database, each with its own copy of the workflows
 * file: one restarted on an older copy while a replica that synced a newer
 * one still runs must not put the older definitions back.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

const fileWith = (cron: string) => parseWorkflowsFile(JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme' }], workflows: [{ tenant: 'acme', name: 'load', cron }] }));
const v1 = fileWith('0 2 * * *');
const v2 = fileWith('0 3 * * *');
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);
const origin = (replicaId: string, path = '/etc/bot/workflows.json') => ({ path, modifiedAt: T0, replicaId });
const cron = async () => (await t.db.selectFrom('workflows').select('cron').where('name', '=', 'load').executeTakeFirstOrThrow()).cron;
const heartbeat = (replicaId: string, at: Date) => t.db.insertInto('monitorUptime').values({ replicaId, startedAt: at, lastSeenAt: at }).execute();

it('an older copy is refused while the replica that synced the newer one runs, and synced once it is gone', async () => {
  await syncWorkflowsFile(t.db, v1, minutes(0), {}, undefined, origin('a:1'));
  await syncWorkflowsFile(t.db, v1, minutes(0), {}, undefined, origin('b:1'));
  // Rolling deploy: a restarts on the new file and syncs it.
  const rolled = await syncWorkflowsFile(t.db, v2, minutes(1), {}, undefined, origin('a:2', '/srv/new/workflows.json'));
  expect(rolled.workflows).toMatchObject({ updated: 1, changed: ['acme/load: cron'] });
  expect(rolled.olderThan).toBeUndefined();
  await heartbeat('a:2', minutes(2));

  // b restarts, still on the old copy: nothing is synced, and the sync it lost to is named.
  const stale = await syncWorkflowsFile(t.db, v1, minutes(2), {}, undefined, origin('b:2'));
  expect(stale.olderThan).toMatchObject({ replicaId: 'a:2', filePath: '/srv/new/workflows.json', syncedAt: minutes(1) });
  expect(stale.workflows).toMatchObject({ created: 0, updated: 0, unchanged: 0, removed: 0 });
  expect(await cron()).toBe('0 3 * * *');

  // A new edit is never older: it syncs, whoever runs.
  const edited = await syncWorkflowsFile(t.db, fileWith('0 4 * * *'), minutes(3), {}, undefined, origin('b:3'));
  expect(edited.olderThan).toBeUndefined();
  expect(await cron()).toBe('0 4 * * *');
  // Back to v2 (synced before, replaced since by b:3, which runs): refused too.
  await heartbeat('b:3', minutes(4));
  expect((await syncWorkflowsFile(t.db, v2, minutes(4), {}, undefined, origin('a:3'))).olderThan).toMatchObject({ replicaId: 'b:3' });

  // Every replica rolled back (b:3's heartbeat long gone): the first to restart on the old file syncs it.
  const rollback = await syncWorkflowsFile(t.db, v1, minutes(30), {}, undefined, origin('a:4'));
  expect(rollback.olderThan).toBeUndefined();
  expect(await cron()).toBe('0 2 * * *');
});

it('the same content restarted on the replica that synced it last, or written differently, syncs as before', async () => {
  const layout = parseWorkflowsFile(JSON.stringify({ workflows: [{ cron: '0 2 * * *', name: 'load', tenant: 'acme' }], tenants: [{ name: 'Acme', id: 'acme' }] }));
  const again = await syncWorkflowsFile(t.db, layout, minutes(31), {}, undefined, origin('c:1'));
  expect(again.olderThan).toBeUndefined();
  expect(again.workflows).toMatchObject({ updated: 0, unchanged: 1 });
});

it('a replica whose stop completed holds the newer file no more: the last of a full rollback syncs the older copy at once', async () => {
  const v5 = fileWith('0 5 * * *');
  const v6 = fileWith('0 6 * * *');
  await syncWorkflowsFile(t.db, v5, minutes(40), {}, undefined, origin('d:1'));
  await syncWorkflowsFile(t.db, v6, minutes(41), {}, undefined, origin('e:1'));
  await heartbeat('e:1', minutes(42));
  expect((await syncWorkflowsFile(t.db, v5, minutes(42), {}, undefined, origin('d:2'))).olderThan).toMatchObject({ replicaId: 'e:1' });
  // e:1 is rolled back too: its stop completes, its heartbeat's last minute notwithstanding.
  await markFileSyncsStopped(t.db, 'e:1', minutes(42));
  expect((await syncWorkflowsFile(t.db, v5, minutes(42), {}, undefined, origin('e:2'))).olderThan).toBeUndefined();
  expect(await cron()).toBe('0 5 * * *');
});
