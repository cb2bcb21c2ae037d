import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { startApp } from './app.js';
import { ConfigError, loadConfig, misspelledVariables, readSecretFiles, slackMode, type Config } from './config/env.js';
import type { Db } from './db/connect.js';
import { packageFile } from './config/package-files.js';
import { withDestinationIdKey } from './ledger/destination-id-key.js';
import { readWorkflowsFile, WorkflowsFileError, type WorkflowsFile } from './config/workflows-file.js';
import { migrateDatabase } from './db/migrate.js';
import { pagerKeysConfiguredNowhere } from './services/pager-key-guard.js';
import { emailWithoutSmtp, missingCommandPaths, variablesNamedIn } from './config/start-warnings.js';
import { EmbeddedPostgresError } from './db/embedded.js';
import { openDatabase } from './open-database.js';
import { createLogger, type Logger } from './log.js';
import { isConnectionError } from './db/connection-errors.js';
import { backoffAfterFailure } from './engine/runner.js';
import { systemClock } from './clock.js';
import { runReplica } from './lifecycle.js';
import { recordPolicyVersions } from './services/policy-versions.js';
import { syncWorkflowsFile, type SyncResult } from './services/sync-workflows.js';
import type { SyncSummary } from './domain/definition-changes.js';

const EXAMPLE_WORKFLOWS = packageFile('examples/workflows.json');

async function main(): Promise<void> {
  let config;
  try {
    // *_FILE secrets are read once, here, so the workflows file's variable references find them too.
    const files = readSecretFiles(process.env);
    if (files.problems.length) throw new ConfigError(files.problems);
    for (const [k, v] of Object.entries(files.env)) if (v !== undefined && process.env[k] === undefined) process.env[k] = v;
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL);

  // Validate the workflows file before anything is started or written.
  const workflowsPath = config.WORKFLOWS_FILE ?? EXAMPLE_WORKFLOWS;
  let file;
  try {
    file = await readWorkflowsFile(workflowsPath);
  } catch (error) {
    if (error instanceof WorkflowsFileError) {
      console.error(error.message);
      const count = error.problems.length === 1 ? 'the problem' : `the ${error.problems.length} problems`;
      console.error(`nothing was started and nothing synced, the valid entries included: fix ${count} above and start again (a database keeps what its last good start synced)`);
      process.exit(2);
    }
    throw error;
  }
  if (!config.WORKFLOWS_FILE) {
    logger.info(
      { file: workflowsPath },
      'no WORKFLOWS_FILE: watching the bundled example, whose flaky-export fails every minute on purpose; set WORKFLOWS_FILE to your own file (docs/workflows-file.md) to watch yours',
    );
  }
  if (!config.API_TOKEN) logger.info('no API_TOKEN: the admin API is off (every /api/v1 call without a tenant token answers 401); set API_TOKEN, 16 characters or more, to use it (docs/api.md)');
  for (const line of [...emailWithoutSmtp(file, config), ...missingCommandPaths(file, process.cwd())]) logger.warn({ file: workflowsPath }, line);
  // A typo'd name (SLACK_BOT_TOKN) would otherwise leave its setting at the default without a word.
  for (const line of misspelledVariables(process.env, variablesNamedIn([file, platformDestinationsAsWritten()]))) logger.warn(line);

  let database;
  try {
    database = await openDatabase(config, logger);
  } catch (error) {
    if (error instanceof EmbeddedPostgresError) {
      console.error(error.message);
      process.exit(1);
    }
    logger.fatal({ err: error }, 'could not open the database');
    process.exit(1);
  }
  const opened = database;
  await runReplica({
    logger,
    closeDatabase: () => opened.close(),
    start: async (signal) => {
      // A replica started while its database is away (a failover, both started at once) waits for it rather than crash-looping.
      const loaded = config;
      const keyed = await whileDatabaseAway(logger, loaded.STARTUP_DATABASE_WAIT_SECONDS, signal, () => prepareDatabase(opened, loaded, file, workflowsPath, logger));
      if (signal.aborted) throw new Error('told to stop during start-up');
      return startApp({ config: keyed, db: opened.db, apiDb: opened.apiDb, pollerDb: opened.pollerDb, databaseUrl: opened.url, logger });
    },
    started: (app) =>
      logger.info(
        { port: app.port, database: opened.embedded ? 'embedded' : 'DATABASE_URL', slack: slackMode(config) },
        `ready on http://${shownHost(config.HOST)}:${app.port}`,
      ),
    onStopSignal: (handler) => {
      process.on('SIGINT', () => handler('SIGINT'));
      process.on('SIGTERM', () => handler('SIGTERM'));
      // A closed terminal: by Node's default the process ended at once, orphaning the embedded PostgreSQL.
      process.on('SIGHUP', () => handler('SIGHUP'));
    },
    exit: (code) => process.exit(code),
  });
}

/** Where a browser or curl on this machine reaches the bot: localhost for every interface, else the one it listens on. */
function shownHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** PLATFORM_DESTINATIONS as the operator wrote it, with its `…Env` names (the loaded config holds their values instead). */
function platformDestinationsAsWritten(): unknown {
  try {
    return JSON.parse(process.env.PLATFORM_DESTINATIONS || '[]');
  } catch {
    return [];
  }
}

/** Migrations, the destination id key, the workflows file and the policy versions: the configuration keyed. */
async function prepareDatabase(database: { db: Db; url: string }, config: Config, file: WorkflowsFile, workflowsPath: string, logger: Logger): Promise<Config> {
  const { db } = database;
  // On a connection of their own, without the engine's 30 s statement limit: they may take minutes.
  const migrated = await migrateDatabase(database.url);
  const applied = migrated.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
  if (applied.length) logger.info({ applied }, 'migrations applied');
  // Webhook destinations are named by a digest under the database's key: loaded before anything routes.
  const keyed = await withDestinationIdKey(db, config);
  const modifiedAt = await stat(workflowsPath).then((s) => s.mtime, () => null);
  const sync = await syncWorkflowsFile(db, file, systemClock.now(), process.env, keyed, { path: workflowsPath, modifiedAt, replicaId: keyed.REPLICA_ID });
  for (const line of syncLines(sync, workflowsPath, modifiedAt)) logger[line.level]({ file: workflowsPath, ...line.fields }, line.msg);
  // A PLATFORM_DESTINATIONS key removed at this restart cannot be refused (the file sync and the API refuse a tenant's): said loudly.
  for (const line of await pagerKeysConfiguredNowhere(db, keyed)) logger.warn(line);
  // Workflows written over the API, and any whose derived defaults this release changes.
  const versions = await recordPolicyVersions(db, { now: systemClock.now(), config: keyed, changedBy: 'api' });
  if (versions) logger.info({ versions }, 'policy versions recorded');
  return keyed;
}

type LogLine = { level: 'info' | 'warn'; fields: object; msg: string };

/** What the start says of the workflows sync: what it changed, or why it synced nothing; the tenants and workflows it took over from the API. */
function syncLines(sync: SyncResult, path: string, modifiedAt: Date | null): LogLine[] {
  const when = (d: Date | null) => d?.toISOString() ?? 'at an unknown time';
  const newer = sync.olderThan;
  if (newer) {
    return [{
      level: 'warn',
      fields: { fileModifiedAt: modifiedAt, newer },
      msg: `workflows file not synced: this copy (${path}, modified ${when(modifiedAt)}) was synced before and replaced since by the copy of replica ${newer.replicaId} (${newer.filePath}, modified ${when(newer.fileModifiedAt)}, synced ${when(newer.syncedAt)}), which still runs; this replica runs on the definitions in the database. Roll it forward to the newer file (to go back to this one, stop the replicas on the newer file first: docs/workflows-file.md)`,
    }];
  }
  const counts = (c: SyncSummary) => `${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged, ${c.removed} removed${c.changed.length ? ` (${c.changed.join('; ')})` : ''}`;
  // Counted against what was stored, field by field: a restart with the same file says `0 updated`; the tenants only when one changed.
  const tenants = sync.tenants.changed.length || sync.tenants.created ? `; tenants: ${counts(sync.tenants)}` : '';
  const lines: LogLine[] = [{ level: 'info', fields: sync, msg: `workflows synced: ${counts(sync.workflows)}${tenants}` }];
  for (const [kind, names] of Object.entries(sync.takenOver)) {
    if (names.length) lines.push({ level: 'warn', fields: { [kind]: names }, msg: `the workflows file now declares ${kind} managed over the API until now: the file's version replaced theirs, and the API can no longer change them (${names.join(', ')})` });
  }
  return lines;
}

/**
 * Runs the start-up's database work again, with a growing pause, for as long
 * as the database does not answer (refused, unresolvable, starting up, a
 * connection dropped) and at most `waitSeconds`: each step is safe to take
 * again (migrations under their lock, the sync and the policy versions in
 * transactions). Anything else fails at once, as does the last attempt;
 * a stop signal (SIGTERM) ends the wait.
 */
async function whileDatabaseAway<T>(logger: Logger, waitSeconds: number, signal: AbortSignal, step: () => Promise<T>): Promise<T> {
  const until = systemClock.now().getTime() + waitSeconds * 1000;
  let loggedAt = -Infinity;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw new Error('told to stop while waiting for the database');
    try {
      const result = await step();
      if (attempt > 1) logger.info({ attempts: attempt }, 'the database answers; starting');
      return result;
    } catch (error) {
      const left = until - systemClock.now().getTime();
      if (!isConnectionError(error) || left <= 0) throw error;
      // The first failure, then one line every 30 s: the wait may be minutes.
      if (systemClock.now().getTime() - loggedAt >= 30_000) {
        // Expected (a failover, a database started with the bot): why in words, no stack.
        logger.warn({ error: connectionFailure(error), attempt, waitingUpToSeconds: Math.ceil(left / 1000) }, 'the database does not answer; waiting for it before starting (STARTUP_DATABASE_WAIT_SECONDS)');
        loggedAt = systemClock.now().getTime();
      }
      await systemClock.sleep(Math.min(left, backoffAfterFailure(500, attempt)), signal);
    }
  }
}

/** A connection error's words: its message, or (an AggregateError of every address tried) its parts' messages. */
function connectionFailure(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ');
  return error instanceof Error ? error.message || (error as { code?: string }).code || error.name : String(error);
}

if (!existsSync(EXAMPLE_WORKFLOWS)) throw new Error(`missing ${EXAMPLE_WORKFLOWS}`);
await main();
