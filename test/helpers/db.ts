import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../src/db/scratch.js';

export type TestDatabase = ScratchDatabase;

/** A fresh, migrated database of its own, cloned from the run's template. */
export async function createTestDatabase(poolSize = 10): Promise<TestDatabase> {
  const template = inject('pgTemplate');
  const name = `sbt_${template.slice('sb_template_'.length)}_${randomBytes(4).toString('hex')}`;
  return createScratchDatabase(inject('pgAdminUrl'), name, { template, poolSize });
}
