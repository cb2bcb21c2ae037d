import pino from 'pino';
import { ConfigError } from '../config/env.js';
import { renderReplayText } from '../replay/render-text.js';
import { startReplayServer } from '../replay/replay-database.js';
import { replayScenario } from '../replay/replay-scenario.js';
import { readScenario, ScenarioError } from '../replay/scenario.js';

const USAGE = 'usage: npm run replay -- <scenario.json> [--json]';

const args = process.argv.slice(2);
const json = args.includes('--json');
const files = args.filter((a) => a !== '--json');
const unknown = files.filter((a) => a.startsWith('-'));
if (files.length !== 1 || unknown.length > 0) {
  console.error(unknown.length ? `unknown option ${unknown.join(', ')}\n${USAGE}` : USAGE);
  process.exit(2);
}
const path = files[0]!;

// Logs go to stderr only: with --json, stdout carries exactly one JSON object.
const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2));

try {
  const scenario = await readScenario(path);
  const server = await startReplayServer(process.env.DATABASE_URL || undefined, logger);
  try {
    const database = await server.createDatabase();
    try {
      const result = await replayScenario(scenario, { db: database.db, logger });
      process.stdout.write(json ? `${JSON.stringify(result.transcript)}\n` : `${renderReplayText(result, path)}\n`);
    } finally {
      await database.drop();
    }
  } finally {
    await server.stop();
  }
} catch (error) {
  if (error instanceof ScenarioError || error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
}
