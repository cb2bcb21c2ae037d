import { describe, expect, it } from 'vitest';
import { blockingIncident, dependencyProblems, upstreamHolds, dependencyRefText, dependencyVerdict, parseDependencyRef, type DependencyNode } from '../../src/domain/dependencies.js';

const node = (tenant: string, name: string, ...dependsOn: string[]): DependencyNode => ({ tenant, name, dependsOn });

describe('dependency names', () => {
  it.each([
    ['load', 'acme', { tenant: 'acme', name: 'load' }],
    ['globex/load', 'acme', { tenant: 'globex', name: 'load' }],
    ['acme/load', 'acme', { tenant: 'acme', name: 'load' }],
  ])('%s from %s', (ref, own, key) => {
    expect(parseDependencyRef(ref, own)).toEqual(key);
  });

  it('are written by name within the tenant and as tenant/name across', () => {
    expect(dependencyRefText({ tenant: 'acme', name: 'load' }, 'acme')).toBe('load');
    expect(dependencyRefText({ tenant: 'globex', name: 'load' }, 'acme')).toBe('globex/load');
  });
});

describe('dependencyProblems', () => {
  it.each<[string, DependencyNode[], { node: number; dep: number; message: string }[]]>([
    ['a chain is fine', [node('acme', 'a'), node('acme', 'b', 'a'), node('acme', 'c', 'b', 'a')], []],
    ['another tenant by tenant/name', [node('acme', 'a'), node('globex', 'b', 'acme/a')], []],
    ['an unknown name', [node('acme', 'a', 'nope')], [{ node: 0, dep: 0, message: 'no such workflow' }]],
    ['a same-named workflow of another tenant is not this tenant\'s', [node('acme', 'a'), node('globex', 'b', 'a')], [{ node: 1, dep: 0, message: 'no such workflow' }]],
    ['itself', [node('acme', 'a', 'a')], [{ node: 0, dep: 0, message: 'a workflow cannot depend on itself (a → a)' }]],
    ['a two-step cycle, reported once on its first workflow', [node('acme', 'a', 'b'), node('acme', 'b', 'a')], [{ node: 0, dep: 0, message: 'dependency cycle: a → b → a' }]],
    [
      'a longer cycle across tenants, spelled from its first workflow',
      [node('acme', 'x'), node('acme', 'a', 'x', 'globex/b'), node('globex', 'b', 'c'), node('globex', 'c', 'acme/a')],
      [{ node: 1, dep: 1, message: 'dependency cycle: a → globex/b → globex/c → a' }],
    ],
  ])('%s', (_, nodes, problems) => {
    expect(dependencyProblems(nodes)).toEqual(problems);
  });

  it('checks only the given entries, but finds a cycle closed through the others', () => {
    const nodes = [node('acme', 'new', 'b'), node('acme', 'b', 'c'), node('acme', 'c', 'new'), node('acme', 'broken', 'gone')];
    expect(dependencyProblems(nodes, new Set([0]))).toEqual([{ node: 0, dep: 0, message: 'dependency cycle: new → b → c → new' }]);
  });

  it("spells a cycle out to a tenant without another tenant's names (an operator's link)", () => {
    const nodes = [node('acme', 'load', 'report'), node('acme', 'report', 'globex/ledger'), node('globex', 'ledger', 'acme/load')];
    expect(dependencyProblems(nodes, new Set([0]), 'acme')).toEqual([
      { node: 0, dep: 0, message: "dependency cycle: load → report → another tenant's workflow → load" },
    ]);
    expect(dependencyProblems(nodes, new Set([0]))[0]!.message).toBe('dependency cycle: load → report → globex/ledger → load');
  });
});

describe('blockingIncident', () => {
  const at = (iso: string) => new Date(iso);
  it('is the oldest open upstream alert, ties broken by id; none without one', () => {
    expect(blockingIncident([])).toBeNull();
    const a = { alertId: 7, workflowId: 1, openedAt: at('2026-03-10T02:10:00Z') };
    const b = { alertId: 5, workflowId: 2, openedAt: at('2026-03-10T02:04:00Z') };
    const c = { alertId: 3, workflowId: 3, openedAt: at('2026-03-10T02:04:00Z') };
    expect(blockingIncident([a, b])).toBe(b);
    expect(blockingIncident([a, b, c])).toBe(c);
  });

  it('holds a downstream back only under an incident of its own mode: live by live, shadow by shadow', () => {
    const live = { alertId: 3, workflowId: 1, openedAt: at('2026-03-10T02:04:00Z') };
    const shadow = { alertId: 2, workflowId: 2, openedAt: at('2026-03-10T02:00:00Z'), shadow: true };
    expect(blockingIncident([shadow])).toBeNull();
    expect(blockingIncident([shadow, live])).toBe(live);
    expect(blockingIncident([shadow, live], { shadow: true })).toBe(shadow);
    expect(blockingIncident([live], { shadow: true })).toBeNull();
    expect(upstreamHolds({}, { shadow: false })).toBe(true);
    expect(upstreamHolds({ shadow: true }, {})).toBe(false);
  });
});

describe('dependencyVerdict', () => {
  const incident = { alertId: 9, workflowId: 1, openedAt: new Date('2026-03-10T02:04:00Z') };
  it.each([
    ['no upstream incident: its own evaluation', { hasOpenAlert: false, incident: null, newestFailureRunId: 40, blockLastRunId: null }, { kind: 'own' }],
    ['its own alert already open: it stays', { hasOpenAlert: true, incident, newestFailureRunId: 40, blockLastRunId: null }, { kind: 'own' }],
    ['healthy under an incident: nothing to hold back', { hasOpenAlert: false, incident, newestFailureRunId: null, blockLastRunId: null }, { kind: 'own' }],
    ['a new failure under an incident: held back and recorded', { hasOpenAlert: false, incident, newestFailureRunId: 40, blockLastRunId: null }, { kind: 'blocked', incident, record: true }],
    ['the failure already counted: held back, not counted twice', { hasOpenAlert: false, incident, newestFailureRunId: 40, blockLastRunId: 40 }, { kind: 'blocked', incident, record: false }],
  ])('%s', (_, input, verdict) => {
    expect(dependencyVerdict(input)).toEqual(verdict);
  });
});
