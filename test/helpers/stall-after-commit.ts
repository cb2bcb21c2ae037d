import type { Db } from '../../src/db/connect.js';

/**
 * Seams between a commit and what a loop does next, for tests of what
 * happens in that gap (a replica stalled past its lease, a workflow paused
 * after its tick was claimed): the database is the real one, wrapped.
 */

/** Where a stalled replica stops: `reached` once it gets there; it goes on at `release()`. */
export function stallPoint() {
  let arrive!: () => void;
  let go!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const released = new Promise<void>((r) => (go = r));
  return { reached, release: () => go(), stall: () => (arrive(), released) };
}

/** A replica's database whose first transaction, once committed, stalls: between its commit and what comes next. */
export function stallingAfterFirstCommit(db: Db, stall: () => Promise<void>): Db {
  return afterFirstCommit(db, stall);
}

/** A replica's database whose first COMMIT is carried out but its answer lost: the connection drops as it comes. */
export function losingFirstCommitAnswer(db: Db): Db {
  return afterFirstCommit(db, async () => {
    throw new Error('Connection terminated unexpectedly');
  });
}

function afterFirstCommit(db: Db, then: () => Promise<void>): Db {
  let stalled = false;
  const bound = <T extends object>(target: T, prop: string | symbol) => {
    const value = Reflect.get(target, prop) as unknown;
    return typeof value === 'function' ? value.bind(target) : value;
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop !== 'transaction') return bound(target, prop);
      return () =>
        new Proxy(target.transaction(), {
          get(builder, p) {
            if (p !== 'execute') return bound(builder, p);
            return async (fn: Parameters<typeof builder.execute>[0]) => {
              const result = await builder.execute(fn);
              if (!stalled) {
                stalled = true;
                await then();
              }
              return result;
            };
          },
        });
    },
  });
}
