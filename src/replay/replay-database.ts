import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { createScratchDatabase, startScratchServer } from '../db/scratch.js';
import type { Logger } from '../log.js';

/** Where replay databases are made: DATABASE_URL's server, or an embedded one in a temporary folder. */
export interface ReplayServer {
  embedded: boolean;
  /** A fresh, migrated database of its own; `drop` removes it. */
  createDatabase(): Promise<ReplayDatabase>;
  stop(): Promise<void>;
}

export interface ReplayDatabase {
  db: Db;
  name: string;
  drop(): Promise<void>;
}

export async function startReplayServer(databaseUrl: string | undefined, logger: Logger): Promise<ReplayServer> {
  const server = await startScratchServer(databaseUrl, 'replay', (line) => logger.debug({ postgres: line.trim() }, 'embedded postgres'));
  return {
    embedded: server.embedded,
    stop: server.stop,
    // Never the database DATABASE_URL names: a replay writes a whole night of rows.
    createDatabase: () => createScratchDatabase(server.adminUrl, `replay_${randomBytes(6).toString('hex')}`),
  };
}
