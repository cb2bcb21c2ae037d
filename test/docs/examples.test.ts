import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { parseWorkflowsFile, workflowsFileJsonSchema } from '../../src/config/workflows-file.js';
import { parseScenario, readScenario } from '../../src/replay/scenario.js';

/** The ```json blocks of a page. */
function jsonBlocks(page: string): unknown[] {
  return [...readFileSync(page, 'utf8').matchAll(/^```json\n([\s\S]*?)^```/gm)].map((m) => JSON.parse(m[1]!));
}

type Entry = { tenant: string; name: string; dependsOn?: string[] };

/** A workflow shown alone, in a file with its tenants and the workflows it depends on (as stand-ins). */
function fileAround(workflow: Entry): string {
  const stand = (workflow.dependsOn ?? []).map((ref) => {
    const [tenant, name] = ref.includes('/') ? ref.split('/') : [workflow.tenant, ref];
    return { tenant, name, cron: '0 * * * *' };
  });
  const tenants = [...new Set([workflow.tenant, ...stand.map((s) => s.tenant)])].map((id, i) => ({ id, name: id, channel: `CTENANT${i}` }));
  return JSON.stringify({ tenants, workflows: [workflow, ...stand] });
}

const env = { ACME_API_TOKEN: 'a-token-of-sixteen-or-more', ACME_WEBHOOK_SECRET: 'a-secret-of-sixteen-or-more', ACME_PAGERDUTY_KEY: 'R0123456789abcdefABCDEF0123456789', ACME_PAGERDUTY_OLD_KEY: 'R0LD456789abcdefABCDEF0123456789' };

describe('the examples validate through the real validators', () => {
  it('examples/workflows.json', () => {
    expect(() => parseWorkflowsFile(readFileSync('examples/workflows.json', 'utf8'), 'examples/workflows.json', {})).not.toThrow();
  });

  it.each(readdirSync('examples/scenarios').filter((f) => f.endsWith('.json')))('examples/scenarios/%s', async (file) => {
    await expect(readScenario(`examples/scenarios/${file}`)).resolves.toBeTruthy();
  });

  it('the scenario of docs/replay.md', () => {
    const scenarios = jsonBlocks('docs/replay.md').filter((b) => typeof (b as { start?: unknown }).start === 'string');
    expect(scenarios).toHaveLength(1);
    for (const s of scenarios) parseScenario(JSON.stringify(s), 'docs/replay.md');
  });

  it.each(['README.md', 'docs/workflows-file.md', 'docs/launchers.md', 'docs/destinations.md', 'docs/alerts.md', 'docs/policies.md', 'docs/security.md'])(
    'the workflows-file examples of %s',
    (page) => {
      for (const block of jsonBlocks(page)) {
        const b = block as { tenants?: unknown; workflows?: unknown; tenant?: unknown; cron?: unknown };
        // A page may show the tenants part alone.
        if (b.tenants || b.workflows) parseWorkflowsFile(JSON.stringify({ workflows: [], ...b }), page, env);
        else if (typeof b.tenant === 'string' && typeof b.cron === 'string') parseWorkflowsFile(fileAround(block as Entry), page, env);
      }
    },
  );
});

type JsonSchema = { properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] };

/** Every field name of the format, however deep (destinations and launchers included). */
function fieldNames(schema: JsonSchema, out = new Set<string>()): Set<string> {
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    out.add(name);
    fieldNames(sub, out);
  }
  for (const sub of [schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) if (sub) fieldNames(sub, out);
  return out;
}

describe('docs/workflows-file.md', () => {
  it('names every field of the format (destinations\' own fields in docs/destinations.md)', () => {
    const page = readFileSync('docs/workflows-file.md', 'utf8') + readFileSync('docs/destinations.md', 'utf8');
    const unnamed = [...fieldNames(workflowsFileJsonSchema() as JsonSchema)].filter((name) => name !== '$schema' && !page.includes(`\`${name}\``) && !page.includes(`"${name}"`));
    expect(unnamed).toEqual([]);
  });

  it('gives each policy field its true range and values', () => {
    type Field = { type?: string; minimum?: number; exclusiveMinimum?: number; maximum?: number; enum?: string[] };
    const schema = workflowsFileJsonSchema() as { properties: { workflows: { items: { properties: { policy: { properties: Record<string, Field> } } } } } };
    const page = readFileSync('docs/workflows-file.md', 'utf8').replace(/\s+/g, ' ');
    const wrong: string[] = [];
    for (const [name, f] of Object.entries(schema.properties.workflows.items.properties.policy.properties)) {
      const said =
        f.enum !== undefined ? f.enum.map((v) => `\`${v}\``)
        : f.exclusiveMinimum !== undefined ? [`\`${name}\` (over ${f.exclusiveMinimum}, at most ${f.maximum}`]
        : f.maximum === Number.MAX_SAFE_INTEGER ? [`\`${name}\` (${f.minimum} or more`]
        : f.minimum !== undefined ? [`\`${name}\` (${f.minimum}–${f.maximum}`]
        : [];
      for (const words of said) if (!page.includes(words)) wrong.push(`${name}: the page does not say ${words}`);
    }
    expect(wrong).toEqual([]);
  });
});
