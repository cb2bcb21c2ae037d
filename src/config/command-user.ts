import { readFileSync } from 'node:fs';

/** COMMAND_USER resolved from /etc/passwd: the identity jobs run under. */
export interface CommandUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** A user by name or numeric uid, from the passwd file; a reason when there is none. */
export function resolveCommandUser(spec: string, passwd = '/etc/passwd'): CommandUser | { error: string } {
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch (error) {
    return { error: `COMMAND_USER=${JSON.stringify(spec)}: cannot read ${passwd}: ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
  }
  for (const line of text.split('\n')) {
    const [name, , uid, gid, , home] = line.split(':');
    if (!name || uid === undefined || gid === undefined) continue;
    if (name === spec || uid === spec) return { name, uid: Number(uid), gid: Number(gid), home: home || '/' };
  }
  return { error: `COMMAND_USER=${JSON.stringify(spec)}: no such user in ${passwd}` };
}
