// Proves the build runs without tsx: `node dist/cli/migrate.js` migrates a fresh
// database and `node dist/main.js` starts on it and answers /readyz with 200.
// Run after `npm run build`. Uses TEST_DATABASE_URL's server (a scratch database,
// dropped after); without one, main.js starts its embedded PostgreSQL.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const admin = process.env.TEST_DATABASE_URL;
const name = `sb_dist_check_${process.pid}`;
const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
delete env.TEST_DATABASE_URL;
delete env.DATABASE_URL;
let dataDir;
let adminClient;

function fail(message) {
  console.error(`dist check: ${message}`);
  process.exitCode = 1;
}

try {
  if (admin) {
    adminClient = new pg.Client({ connectionString: admin });
    await adminClient.connect();
    await adminClient.query(`create database ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    const migrate = spawnSync(process.execPath, ['dist/cli/migrate.js'], { env, encoding: 'utf8', timeout: 120_000 });
    if (migrate.status !== 0) throw new Error(`node dist/cli/migrate.js exited ${migrate.status}:\n${migrate.stdout}${migrate.stderr}`);
    console.log(`dist check: node dist/cli/migrate.js\n${migrate.stdout.trim()}`);
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'sb-dist-'));
    env.DATA_DIR = dataDir;
  }
  await bootMain(env);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
} finally {
  if (adminClient) {
    await adminClient.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await adminClient.end();
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

/** Starts `node dist/main.js`, waits for its `ready on` line, asks /readyz, stops it with SIGTERM. */
async function bootMain(env) {
  const child = spawn(process.execPath, ['dist/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  try {
    const port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`node dist/main.js not ready after 180 s:\n${out}`)), 180_000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /"port":(\d+)/.exec(out.split('\n').find((l) => l.includes('ready on')) ?? '');
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      exited.then(({ code }) => reject(new Error(`node dist/main.js exited ${code} before ready:\n${out}`)));
    });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    if (ready.status !== 200) throw new Error(`/readyz answered ${ready.status}: ${await ready.text()}`);
    console.log(`dist check: node dist/main.js ready on port ${port}, /readyz 200`);
  } finally {
    child.kill('SIGTERM');
    const { code, signal } = await exited;
    if (code !== 0 && signal !== 'SIGTERM') fail(`node dist/main.js exited ${code ?? signal} on SIGTERM:\n${out}`);
  }
}
