import { parseArgs } from 'node:util';
import { passed, renderTable } from './report.js';
import { runChaos, SCENARIOS } from './run-chaos.js';
import { createLogger } from '../../src/log.js';

/**
 * `npm run chaos`: three real replicas per scenario, killed, starved of their
 * database and of Slack, while a driver reports runs for 200 workflows; then
 * the ledger and the Slack server's log are audited. Prints one table row per
 * scenario and exits non-zero when anything was lost, doubled or stuck.
 *
 *   npm run chaos -- [--workflows 200] [--only "replica kills"]
 */
const { values } = parseArgs({
  options: {
    workflows: { type: 'string', default: '200' },
    only: { type: 'string', multiple: true },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`usage: npm run chaos -- [--workflows N] [--only <scenario>]…\nscenarios: ${SCENARIOS.map((s) => `"${s.name}"`).join(', ')}`);
  process.exit(0);
}
const workflows = Number(values.workflows);
if (!Number.isInteger(workflows) || workflows < 5) {
  console.error(`--workflows=${JSON.stringify(values.workflows)}: use a whole number of at least 5`);
  process.exit(2);
}

const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
const results = await runChaos({ databaseUrl: process.env.DATABASE_URL || undefined, workflows, logger, only: values.only });
console.log(`\n${renderTable(results)}\n`);
for (const r of results) for (const p of r.problems) console.log(`  ${r.name}: ${p}`);
const ok = results.length > 0 && results.every(passed);
console.log(ok ? 'chaos: every scenario ended with 0 duplicated, 0 lost' : 'chaos: FAILED');
process.exit(ok ? 0 : 1);
