import type { CompiledQuery, KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/** A view of `db` that records every statement it sends, compiled by kysely exactly as it goes to the server. */
export function capturing(db: Db): { db: Db; take(): CompiledQuery[] } {
  const captured: CompiledQuery[] = [];
  const executor = db.getExecutor();
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      captured.push(executor.compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), take: () => captured.splice(0) };
}
