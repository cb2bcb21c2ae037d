import { sql, type CompiledQuery, type KyselyPlugin } from 'kysely';
import { createDb, createPool } from '../src/db/connect.js';
import { loadHistoryFacts } from '../src/engine/history-facts.js';
const db = createDb(createPool(process.env.URL!, 2));
const captured: CompiledQuery[] = [];
const ex = db.getExecutor();
const plugin: KyselyPlugin = { transformQuery(a) { captured.push(ex.compileQuery(a.node, a.queryId)); return a.node; }, transformResult: async (a) => a.result };
const ids = Array.from({ length: 100 }, (_, i) => i * 4 + 4);
await db.withPlugin(plugin).transaction().execute(async (trx) => { await sql`set local statement_timeout = 1`.execute(trx).catch(() => {}); });
const q = db.withPlugin(plugin);
try { await q.transaction().execute(async (trx) => { await sql`set local statement_timeout = 1`.execute(trx); await loadHistoryFacts(trx, ids, ids.slice(0, 25)); }); } catch {}
const hf = captured.find((c) => c.sql.includes('with w as'))!;
const pool = createPool(process.env.URL!, 1);
const r = await pool.query(`explain (analyze, buffers, format text) ${hf.sql}`, hf.parameters as unknown[]);
console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
process.exit(0);
