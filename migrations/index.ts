import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';

/** Forward-only, applied in name order. Add new files here. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
};
