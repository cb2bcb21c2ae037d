import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config/env.js';
import { openDatabase } from '../open-database.js';
import { applyCandidate, readCandidatePolicy } from '../replay/candidate-policy.js';
import { comparePolicies, renderComparison } from '../replay/compare-policies.js';
import { parseDuration } from '../domain/durations.js';
import { LedgerSelectionError, scenarioFromLedger, type LedgerScenario } from '../replay/from-ledger.js';
import { renderReplayText } from '../replay/render-text.js';
import { startReplayServer } from '../replay/replay-database.js';
import { replayScenario } from '../replay/replay-scenario.js';
import { checkScenario, readScenario, ScenarioError } from '../replay/scenario.js';

const USAGE = [
  'usage: npm run replay -- <scenario.json> [--json]',
  '       npm run replay -- --from-db --tenant <t> [--workflow <w>] --since <7d | ISO time> [--until <ISO time>]',
  '                         [--policy candidate.json] [--save scenario.json] [--json]',
].join('\n');

class UsageError extends Error {}

// Logs go to stderr only: with --json, stdout carries exactly one JSON object.
const logger = pino({ level: process.env.LOG_LEVEL || 'warn' }, pino.destination(2));

try {
  const { values, positionals } = parseOptions();
  if (values['from-db']) await fromLedger(values);
  else {
    if (positionals.length !== 1) throw new UsageError(USAGE);
    await fromFile(positionals[0]!, !!values.json);
  }
} catch (error) {
  if (error instanceof UsageError) {
    console.error(error.message);
    process.exit(2);
  }
  if (error instanceof ScenarioError || error instanceof ConfigError || error instanceof LedgerSelectionError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
}

function parseOptions() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        'from-db': { type: 'boolean' },
        tenant: { type: 'string' },
        workflow: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        policy: { type: 'string' },
        save: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
}

async function fromFile(path: string, json: boolean): Promise<void> {
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
}

type Options = ReturnType<typeof parseOptions>['values'];

async function fromLedger(values: Options): Promise<void> {
  if (!values.tenant || !values.since) throw new UsageError(`--from-db needs --tenant and --since\n${USAGE}`);
  const until = values.until ? instant(values.until, '--until') : new Date();
  const back = parseDuration(values.since);
  const since = back !== undefined ? new Date(until.getTime() - back) : instant(values.since, '--since');
  if (since >= until) throw new UsageError('--since must be before --until');
  if (until.getTime() - since.getTime() > 31 * 86_400_000) throw new UsageError('a replay covers at most 31 days: shorten --since');
  const candidate = values.policy ? await readCandidatePolicy(values.policy) : undefined;

  const config = loadConfig(process.env);
  // The bot's own database, read only: the replays run on scratch databases.
  const source = await openDatabase(config, logger, 2);
  let ledger: LedgerScenario;
  try {
    ledger = await scenarioFromLedger(source.db, {
      tenant: values.tenant,
      ...(values.workflow ? { workflow: values.workflow } : {}),
      since,
      until,
      ...(config.PLATFORM_CHANNEL ? { platformChannel: config.PLATFORM_CHANNEL } : {}),
    });
  } finally {
    await source.close();
  }
  checkScenario(ledger.scenario, 'ledger scenario');
  if (values.save) await writeFile(values.save, `${JSON.stringify(ledger.scenario, null, 2)}\n`);
  const title = `${values.tenant}${values.workflow ? `/${values.workflow}` : ''} ${since.toISOString()} → ${until.toISOString()}`;

  const server = await startReplayServer(config.DATABASE_URL, logger);
  try {
    const comparison = await comparePolicies(server, ledger.scenario, candidate ? applyCandidate(ledger.scenario, candidate, values.policy) : ledger.scenario, logger);
    if (values.json) process.stdout.write(`${JSON.stringify({ scenario: ledger.scenario, notes: ledger.notes, ...comparison })}\n`);
    else process.stdout.write(`${renderComparison(comparison, title, ledger.notes)}${values.save ? `\n\nScenario saved to ${values.save}; replay it with npm run replay -- ${values.save}` : ''}\n`);
  } finally {
    await server.stop();
  }
}

function instant(text: string, flag: string): Date {
  const ms = Date.parse(text);
  const expected = flag === '--since' ? 'neither a duration such as 7d nor an ISO time' : 'not an ISO time such as 2026-03-09T00:00:00Z';
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms)) throw new UsageError(`${flag}: "${text}" is ${expected}`);
  return new Date(ms);
}
