import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { envSchema, KNOWN_VARIABLES } from '../../src/config/env.js';

/** docs/configuration.md's table: each row's variables (a row may name several) with their documented defaults. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync('docs/configuration.md', 'utf8').split('\n')) {
    const cells = /^\| (`[A-Z*][^|]*) \|([^|]*)\|/.exec(line);
    if (!cells) continue;
    const names = [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const defaults = [...cells[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    names.forEach((name, i) => rows.set(name, defaults.length === names.length ? defaults[i]! : ''));
  }
  return rows;
}

/** A bound the table's `bounds` column gives: a range (`0.1–86400`, `over 0, at most 10080`) or a least length (`16 characters or more`). */
type Bound = { min: number; max: number; exclusiveMin: boolean } | { minLength: number };

/** Each variable's documented bound: a row naming several splits the column at its commas, or gives them all one range. */
function documentedBounds(): Map<string, Bound> {
  const out = new Map<string, Bound>();
  for (const line of readFileSync('docs/configuration.md', 'utf8').split('\n')) {
    const cells = /^\| (`[A-Z][^|]*) \|[^|]*\|([^|]*)\|/.exec(line);
    if (!cells) continue;
    const names = [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const text = cells[2]!.replace(/\([^)]*\)/g, '').trim();
    const bound = (part: string): Bound | undefined => {
      const over = /over ([\d.]+), at most ([\d.]+)/.exec(part);
      if (over) return { min: Number(over[1]), max: Number(over[2]), exclusiveMin: true };
      const range = /([\d.]+)–([\d.]+)/.exec(part);
      if (range) return { min: Number(range[1]), max: Number(range[2]), exclusiveMin: false };
      const length = /(\d+) characters or more/.exec(part);
      return length ? { minLength: Number(length[1]) } : undefined;
    };
    const parts = text.split(/,\s*/);
    const ranges = [...text.matchAll(/[\d.]+–[\d.]+/g)];
    names.forEach((name, i) => {
      const b = /^over /.test(text) || names.length === 1 ? bound(text) : parts.length === names.length ? bound(parts[i]!) : ranges.length === 1 ? bound(text) : undefined;
      if (b) out.set(name, b);
    });
  }
  return out;
}

describe('the configuration table (docs/configuration.md)', () => {
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

  it('gives each number its true bounds, and each least length its true one', () => {
    const bounds = documentedBounds();
    const defaults = envSchema.parse({}) as Record<string, unknown>;
    const accepts = (name: string, value: string) => envSchema.safeParse({ [name]: value }).success;
    const numbers = Object.keys(envSchema.shape).filter((name) => typeof defaults[name] === 'number');
    expect(numbers.filter((name) => !bounds.has(name))).toEqual([]);
    const wrong: string[] = [];
    for (const [name, b] of bounds) {
      if ('minLength' in b) {
        if (!accepts(name, 'x'.repeat(b.minLength)) || accepts(name, 'x'.repeat(b.minLength - 1))) wrong.push(`${name}: documented at least ${b.minLength} characters`);
        continue;
      }
      const below = b.exclusiveMin ? b.min : b.min - (Number.isInteger(b.min) ? 1 : b.min / 2);
      const lowest = b.exclusiveMin ? b.min + 0.5 : b.min;
      if (!accepts(name, String(lowest)) || !accepts(name, String(b.max)) || accepts(name, String(below)) || accepts(name, String(b.max + 1))) {
        wrong.push(`${name}: documented ${b.exclusiveMin ? 'over ' : ''}${b.min}–${b.max}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
