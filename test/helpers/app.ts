import { startApp, type AppOptions, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.js';
import { silentLogger } from '../../src/log.js';
import type { TestDatabase } from './db.js';

/**
 * A whole replica in this process, on a free port, against a test database.
 * `env` is parsed by the real config loader, so tests use the same variables
 * an operator would.
 */
export async function startTestApp(
  t: Pick<TestDatabase, 'db' | 'url'>,
  env: Record<string, string> = {},
  options: Partial<Omit<AppOptions, 'config' | 'db'>> = {},
): Promise<RunningApp & { url: string }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', REPLICA_ID: `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`, ...env });
  const app = await startApp({ config, db: t.db, databaseUrl: t.url, logger: silentLogger, port: 0, loops: false, ...options });
  return Object.assign(app, { url: `http://127.0.0.1:${app.port}` });
}
