import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import type { Deps } from '../../src/deps.js';
import { ledgerRoutes } from '../../src/http/ledger-routes.js';
import { maintenanceRoutes } from '../../src/http/maintenance-routes.js';
import { QUERY_ROUTES } from '../../src/http/query-parameters.js';
import { runsRoutes } from '../../src/http/runs-routes.js';
import { tenantsRoutes } from '../../src/http/tenants-routes.js';
import { workflowsRoutes } from '../../src/http/workflows-routes.js';
import { exportedMetrics } from '../helpers/exported-metrics.js';

/** `/workflows/:tenant/:name` as the page writes it: `/workflows/{tenant}/{name}`. */
const shown = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** Every endpoint of the API as `METHOD /path`, from the routers themselves (HEAD goes with GET). */
function endpoints(): string[] {
  const deps = {} as Deps;
  const routers = [runsRoutes(deps), ledgerRoutes(deps), workflowsRoutes(deps), tenantsRoutes(deps), maintenanceRoutes(deps)];
  return routers.flatMap((r) =>
    (r as Router & { listRoutes: () => { path: string; methods: string[] }[] }).listRoutes().flatMap((route) => route.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${shown(route.path)}`)),
  );
}

describe('docs/api.md', () => {
  const page = readFileSync('docs/api.md', 'utf8');
  /** The endpoint table's rows, by `METHOD /path`. */
  const rows = new Map([...page.matchAll(/^\| `((?:GET|POST|PUT|PATCH|DELETE) [^`]+)`[^|]*\|([^\n]*)$/gm)].map((m) => [m[1]!, m[2]!]));

  it('has a row for every endpoint, and none for an endpoint that is gone', () => {
    const real = endpoints();
    expect(real.filter((e) => !rows.has(e))).toEqual([]);
    expect([...rows.keys()].filter((e) => !real.includes(e))).toEqual([]);
  });

  it('names the routes that take query parameters, and each parameter in its row', () => {
    const sentence = /only\s+((?:`GET [^`]+`(?:,\s+|\s+and\s+)?)+)\s+take any/.exec(page);
    expect(sentence, 'the "only … take any" sentence').not.toBeNull();
    const named = [...sentence![1]!.matchAll(/`GET ([^`]+)`/g)].map((m) => m[1]!);
    expect(named.sort()).toEqual(QUERY_ROUTES.map((r) => shown(r.path)).sort());
    const unnamed = QUERY_ROUTES.flatMap(({ path, schema }) => Object.keys(schema.shape).filter((p) => !(rows.get(`GET ${shown(path)}`) ?? '').includes(`\`${p}\``)).map((p) => `GET ${shown(path)}: ${p}`));
    expect(unnamed).toEqual([]);
  });
});

describe('docs/operations.md', () => {
  it('lists every metric the bot exports, and none it does not, each with the labels it carries', async () => {
    const exported = new Map([...(await exportedMetrics())].filter(([name]) => name.startsWith('scheduler_')));
    const page = readFileSync('docs/operations.md', 'utf8');
    // `name` or `name{a,b}` or `name{a="value"}`, as the page writes them.
    const mentions = [...page.matchAll(/`(scheduler_[a-z_]+)(?:\{([^}`]*)\})?/g)].map((m) => ({ name: m[1]!, labels: m[2] === undefined ? undefined : m[2].split(',').map((l) => l.split('=')[0]!.trim()) }));
    const listed = new Set(mentions.map((m) => m.name));
    expect([...exported.keys()].filter((m) => !listed.has(m))).toEqual([]);
    expect([...listed].filter((m) => !exported.has(m))).toEqual([]);
    // Each metric's full label list written once at least (`name{a,b}`, bare for none), and no label it lacks anywhere.
    const unlisted = [...exported].filter(([name, m]) => !mentions.some((x) => x.name === name && [...(x.labels ?? [])].sort().join() === [...m.labels].sort().join())).map(([name, m]) => `${name}{${m.labels.join(',')}}`);
    expect(unlisted).toEqual([]);
    const wrong = mentions.flatMap((x) => (x.labels ?? []).filter((l) => !exported.get(x.name)?.labels.includes(l)).map((l) => `${x.name}: ${l}`));
    expect(wrong).toEqual([]);
  });
});
