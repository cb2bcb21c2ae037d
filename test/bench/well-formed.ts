import { expect, inject } from 'vitest';
import type { BenchContext, Figure } from '../../bench/lib/figures.js';

/** A smoke-sized context on the test run's PostgreSQL server (each benchmark makes its own database there). */
export function smokeContext(): BenchContext {
  return { adminUrl: inject('pgAdminUrl'), size: 'smoke', log: () => {} };
}

/** Figures a table and results.json can carry: named, finite, with units; a target's verdict agrees with the value. Never a speed. */
export function expectWellFormed(figures: Figure[], benchmark: string, names: string[]): void {
  expect(figures.map((f) => f.figure)).toEqual(expect.arrayContaining(names));
  for (const f of figures) {
    expect(f.benchmark).toBe(benchmark);
    expect(Number.isFinite(f.value), `${f.figure} = ${f.value}`).toBe(true);
    expect(f.unit).toMatch(/\S/);
    expect(typeof f.parameters).toBe('object');
    if (f.target !== undefined) expect(f.target).toMatch(/^(<|<=|>|>=) \d+(\.\d+)?$/);
    expect(f.met === undefined).toBe(f.target === undefined);
  }
  expect(JSON.parse(JSON.stringify(figures))).toEqual(figures);
}
