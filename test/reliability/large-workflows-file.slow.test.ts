import { expect, it } from 'vitest';
import { parseWorkflowsFile } from '../../src/config/workflows-file.js';
import { syncWorkflowsFile } from '../../src/services/sync-workflows.js';
import { createTestDatabase } from '../helpers/db.js';
import { T0 } from '../helpers/factories.js';

// At scale (minutes on a loaded 2-core machine), so in `npm run test:slow`; `npm test` syncs 300 the same way (bad-input.test.ts).
const file = (workflows: unknown[]) => JSON.stringify({ tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }], workflows }, null, 2);

it('10,000 workflows are validated and synced, and a second sync changes none of them', async () => {
  const db = await createTestDatabase(2);
  try {
    const workflows = Array.from({ length: 10_000 }, (_, i) => ({ tenant: 'acme', name: `job-${i}`, cron: `${i % 60} ${i % 24} * * *`, timezone: i % 2 ? 'Europe/Berlin' : 'UTC' }));
    const parsed = parseWorkflowsFile(file(workflows));
    expect(parsed.workflows).toHaveLength(10_000);
    const first = await syncWorkflowsFile(db.db, parsed, T0);
    expect(first.workflows).toEqual({ created: 10_000, updated: 0, unchanged: 0, removed: 0, changed: [] });
    const keys = await db.db.selectFrom('workflows').select(['pingKey', 'nextTickAt']).orderBy('id').execute();
    const second = await syncWorkflowsFile(db.db, parsed, T0);
    expect(second.workflows).toEqual({ created: 0, updated: 0, unchanged: 10_000, removed: 0, changed: [] });
    expect(await db.db.selectFrom('workflows').select(['pingKey', 'nextTickAt']).orderBy('id').execute()).toEqual(keys);
  } finally {
    await db.drop();
  }
}, 480_000);
