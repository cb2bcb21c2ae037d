import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { envSchema, KNOWN_VARIABLES } from '../../src/config/env.js';

/** The README's configuration table: each row's variables (a row may name several) with their documented defaults. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync('README.md', 'utf8').split('\n')) {
    const cells = /^\| (`[A-Z*][^|]*) \|([^|]*)\|/.exec(line);
    if (!cells) continue;
    const names = [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const defaults = [...cells[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    names.forEach((name, i) => rows.set(name, defaults.length === names.length ? defaults[i]! : ''));
  }
  return rows;
}

describe('the README configuration table', () => {
  const table = documented();
  const defaults = envSchema.parse({}) as Record<string, unknown>;

  it('names every variable the bot reads, and none it does not', () => {
    const read = Object.keys(envSchema.shape);
    expect(read.filter((v) => !table.has(v))).toEqual([]);
    expect([...table.keys()].filter((v) => v !== '*_FILE' && !KNOWN_VARIABLES.includes(v))).toEqual([]);
  });

  it('gives each variable its true default', () => {
    const wrong: string[] = [];
    for (const [name, shown] of table) {
      const value = defaults[name];
      if (value === undefined || Array.isArray(value) || name === 'REPLICA_ID') continue;
      if (String(value) !== shown) wrong.push(`${name}: documented ${JSON.stringify(shown)}, default ${JSON.stringify(value)}`);
    }
    expect(wrong).toEqual([]);
  });
});
