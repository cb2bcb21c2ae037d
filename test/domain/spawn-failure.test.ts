import { describe, expect, it } from 'vitest';
import { spawnFailure } from '../../src/domain/spawn-failure.js';

describe('why a command could not be started', () => {
  const enoent = { code: 'ENOENT', message: 'spawn /bin/sh ENOENT' };

  it('names the working directory at fault', () => {
    expect(spawnFailure(enoent, '/srv/etl', 'missing')).toBe('working directory /srv/etl does not exist (spawn /bin/sh ENOENT)');
    expect(spawnFailure({ code: 'ENOTDIR', message: 'spawn ENOTDIR' }, '/srv/etl.tar', 'not_a_directory')).toBe('working directory /srv/etl.tar is not a directory (spawn ENOTDIR)');
    expect(spawnFailure({ code: 'EACCES', message: 'spawn /bin/sh EACCES' }, '/root/x', 'directory')).toBe(
      "working directory /root/x or /bin/sh is not accessible to the command's user (spawn /bin/sh EACCES)",
    );
  });

  it('with the directory fine (or none given), a missing /bin/sh is named as such, with what to do', () => {
    const missingShell = '/bin/sh not found: the command launcher runs every command with /bin/sh -c; give the image a POSIX shell (spawn /bin/sh ENOENT)';
    expect(spawnFailure(enoent, undefined, undefined)).toBe(missingShell);
    expect(spawnFailure(enoent, '/srv/etl', 'directory')).toBe(missingShell);
    // Anything else is said as Node says it.
    expect(spawnFailure({ code: 'EAGAIN', message: 'spawn EAGAIN' }, undefined, undefined)).toBe('spawn EAGAIN');
  });
});
