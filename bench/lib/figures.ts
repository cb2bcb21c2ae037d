/** One measured figure, as printed in the table and written to bench/results.json. */
export interface Figure {
  benchmark: string;
  figure: string;
  value: number;
  unit: string;
  /** e.g. '>= 1', '< 100' */
  target?: string;
  met?: boolean;
  parameters: Record<string, unknown>;
}

/** How big a run is: smoke (CI, seconds), quick (npm run bench), full (--full). */
export type BenchSize = 'smoke' | 'quick' | 'full';

export interface BenchContext {
  /** Admin URL of the PostgreSQL server; each benchmark creates its own database on it. */
  adminUrl: string;
  size: BenchSize;
  /** Overrides the size's number of repeats (`--repeats N`). */
  repeats?: number;
  log(message: string): void;
}

export type Benchmark = (ctx: BenchContext) => Promise<Figure[]>;

export function check(value: number, target: string): boolean {
  const [op, raw] = target.split(' ') as [string, string];
  const bound = Number(raw);
  switch (op) {
    case '<':
      return value < bound;
    case '<=':
      return value <= bound;
    case '>':
      return value > bound;
    case '>=':
      return value >= bound;
    default:
      throw new Error(`bad target ${target}`);
  }
}

export function figure(benchmark: string, name: string, value: number, unit: string, parameters: Record<string, unknown>, target?: string): Figure {
  return { benchmark, figure: name, value, unit, parameters, ...(target ? { target, met: check(value, target) } : {}) };
}
