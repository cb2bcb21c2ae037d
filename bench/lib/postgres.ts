import { randomBytes } from 'node:crypto';
import { createScratchDatabase, startScratchServer, type ScratchDatabase, type ScratchServer } from '../../src/db/scratch.js';

/** The PostgreSQL server a benchmark run uses: DATABASE_URL's, or an embedded one in a temp dir. */
export type BenchServer = ScratchServer;

export function startBenchServer(): Promise<BenchServer> {
  return startScratchServer(process.env.DATABASE_URL, 'bench');
}

export type BenchDatabase = ScratchDatabase;

/** A fresh, migrated database of the benchmark's own, dropped (with whatever connects to it) by drop(). */
export function freshDatabase(adminUrl: string, label: string, poolSize = 10): Promise<BenchDatabase> {
  return createScratchDatabase(adminUrl, `bench_${label.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(3).toString('hex')}`, { poolSize });
}
