import pino from 'pino';
import { packageFile } from '../config/package-files.js';
import { renderReplayText } from '../replay/render-text.js';
import { startReplayServer } from '../replay/replay-database.js';
import { replayScenario, type ReplayResult } from '../replay/replay-scenario.js';
import { readScenario } from '../replay/scenario.js';

/**
 * The product in two nights (seeds/000): the same 02:03 failure as a
 * transient blip and as a genuine defect, replayed through the real engine.
 */
const NIGHTS = [
  { file: 'seed-transient-night.json', title: 'the transient night' },
  { file: 'seed-genuine-defect-night.json', title: 'the genuine-defect night' },
];

const logger = pino({ level: process.env.LOG_LEVEL || 'warn' }, pino.destination(2));
const dir = packageFile('examples/scenarios/');

try {
  const server = await startReplayServer(process.env.DATABASE_URL || undefined, logger);
  const results: { title: string; result: ReplayResult }[] = [];
  try {
    for (const night of NIGHTS) {
      const scenario = await readScenario(`${dir}${night.file}`);
      const database = await server.createDatabase();
      try {
        const result = await replayScenario(scenario, { db: database.db, logger });
        results.push({ title: night.title, result });
        process.stdout.write(`${renderReplayText(result, `examples/scenarios/${night.file} (${night.title})`)}\n\n`);
      } finally {
        await database.drop();
      }
    }
  } finally {
    await server.stop();
  }
  process.stdout.write('In short\n');
  for (const { title, result } of results) {
    const s = result.transcript.summary;
    const posted = s.roots + s.replies;
    process.stdout.write(
      `  ${title}: ${plural(s.failedTicks, 'failed tick')}, ${plural(s.alerts, 'alert')}, ${plural(posted, 'message')}` +
        (s.roots ? ` in ${plural(s.roots, 'thread')} (one per alert per channel), each opened and closed` : '') +
        ` (one message per failure: ${result.oneMessagePerFailure}).\n`,
    );
  }
} catch (error) {
  console.error(error);
  process.exit(1);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
