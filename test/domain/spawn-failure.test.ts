import { describe, expect, it } from 'vitest';
import { commandExitError, spawnFailure } from '../../src/domain/spawn-failure.js';
import { isPermanentLaunchError, launchRefusalError, permanentLaunchReason } from '../../src/domain/launch-answer.js';

describe('why a command could not be started', () => {
  const enoent = { code: 'ENOENT', message: 'spawn /bin/sh ENOENT' };
  const permanent = (error: string) => ({ error, permanent: true });

  it('names the working directory at fault: permanent, the same spawn fails the same way seconds later', () => {
    expect(spawnFailure(enoent, '/srv/etl', 'missing')).toEqual(permanent('working directory /srv/etl does not exist (spawn /bin/sh ENOENT)'));
    expect(spawnFailure({ code: 'ENOTDIR', message: 'spawn ENOTDIR' }, '/srv/etl.tar', 'not_a_directory')).toEqual(permanent('working directory /srv/etl.tar is not a directory (spawn ENOTDIR)'));
    expect(spawnFailure({ code: 'EACCES', message: 'spawn /bin/sh EACCES' }, '/root/x', 'directory')).toEqual(
      permanent("working directory /root/x or /bin/sh is not accessible to the command's user (spawn /bin/sh EACCES)"),
    );
    expect(spawnFailure({ code: 'EACCES', message: 'spawn /bin/sh EACCES' }, undefined, undefined)).toEqual(permanent("/bin/sh is not executable by the command's user (spawn /bin/sh EACCES)"));
  });

  it('with the directory fine (or none given), a missing /bin/sh is named as such, with what to do: permanent', () => {
    const missingShell = permanent('/bin/sh not found: the command launcher runs every command with /bin/sh -c; give the image a POSIX shell (spawn /bin/sh ENOENT)');
    expect(spawnFailure(enoent, undefined, undefined)).toEqual(missingShell);
    expect(spawnFailure(enoent, '/srv/etl', 'directory')).toEqual(missingShell);
  });

  it('a machine short of something for now, or a directory that could not be looked at, is transient, said as Node says it', () => {
    for (const code of ['EAGAIN', 'EMFILE', 'ENFILE', 'ENOMEM']) {
      expect(spawnFailure({ code, message: `spawn ${code}` }, '/srv/etl', undefined)).toEqual({ error: `spawn ${code}`, permanent: false });
    }
    expect(spawnFailure(enoent, '/srv/etl', 'unknown')).toEqual({ error: 'spawn /bin/sh ENOENT', permanent: false });
  });

  it('worded as a permanent launch failure the retry engine reads; a transient one is not', () => {
    const error = launchRefusalError({ kind: 'cannot_start', reason: 'working directory /srv/etl does not exist (spawn /bin/sh ENOENT)' });
    expect(error).toBe('launch failed: working directory /srv/etl does not exist (spawn /bin/sh ENOENT) (permanent: not retried)');
    expect(permanentLaunchReason(error)).toBe('cannot be started');
    expect(isPermanentLaunchError('launch failed: spawn EAGAIN')).toBe(false);
  });
});

describe('a command the shell could not find or run', () => {
  it('in the shell\'s own words (dash, bash, busybox), with the code that goes with them: permanent', () => {
    for (const [code, line] of [
      [127, '/bin/sh: 1: etl-job: not found'],
      [127, '/bin/sh: line 1: etl-job: command not found'],
      [127, '/bin/sh: etl-job: not found'],
      [126, '/bin/sh: 1: ./etl.sh: Permission denied'],
      [126, '/bin/sh: line 1: /srv/etl: Is a directory'],
    ] as const) {
      const error = commandExitError(`exited with code ${code}`, code, line);
      expect(error).toBe(`exited with code ${code}: ${line} (permanent: not retried)`);
      expect(permanentLaunchReason(error)).toBe('the shell cannot run the command');
    }
  });

  it("a job's own failure is not: another code, a nested shell's words, or other last words", () => {
    for (const [code, line] of [
      [1, '/bin/sh: 1: etl-job: not found'],
      [127, 'sh: 1: etl-job: not found'],
      [127, 'bash: line 1: etl-job: command not found'],
      [126, '/bin/sh: 1: etl-job: not found'],
      [127, 'psql: connection refused'],
    ] as const) {
      const error = commandExitError(`exited with code ${code}`, code, line);
      expect(error).toBe(`exited with code ${code}: ${line}`);
      expect(isPermanentLaunchError(error)).toBe(false);
    }
    expect(commandExitError('exited with code 127', 127, undefined)).toBe('exited with code 127');
    // Its own output ending with the words is no launcher's wording.
    expect(isPermanentLaunchError('exited with code 1: all done (permanent: not retried)')).toBe(false);
  });
});
