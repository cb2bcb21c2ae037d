/**
 * The house rules of src/ and tools/, checked: no import cycle between their
 * top-level folders (a file directly in src/ is a node of its own; each folder
 * of tools/ is one), production code in src/ never imports tools/, no source
 * file over 300 lines, no function over 80 lines. Prints every violation; those listed
 * in scripts/check-imports.allow (today's, to be emptied by the folder layout
 * work) do not fail the check. `npm run check:imports`; `-- --write-allow`
 * rewrites the list from what is found.
 */
import { readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SRC = join(ROOT, 'src');
const TOOLS = join(ROOT, 'tools');
const ALLOW = join(ROOT, 'scripts', 'check-imports.allow');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The graph node a file belongs to: its top-level folder of src/ (or the file itself when it sits in src/), or `tools/<folder>`. */
function nodeOf(file: string): string {
  if (file.startsWith(TOOLS + '/')) return `tools/${relative(TOOLS, file).split('/')[0]!}`;
  const rel = relative(SRC, file);
  return rel.includes('/') ? rel.split('/')[0]! : rel;
}

interface Edge {
  from: string;
  to: string;
  /** One import that makes the edge, to point at. */
  example: string;
}

function importsOf(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) return parent.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  // An anonymous callback: named after the function around it.
  for (let p = node.parent; p; p = p.parent) if (ts.isFunctionLike(p)) return `${functionName(p, sf)}/<callback>`;
  return '<anonymous>';
}

const violations: string[] = [];
const edges = new Map<string, Edge>();
for (const file of [...sourceFiles(SRC), ...(existsSync(TOOLS) ? sourceFiles(TOOLS) : [])]) {
  const text = readFileSync(file, 'utf8');
  const rel = relative(ROOT, file);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) violations.push(`file-lines ${rel} (${lines} lines)`);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  for (const spec of importsOf(sf)) {
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec);
    if (file.startsWith(SRC + '/') && target.startsWith(TOOLS + '/')) violations.push(`tools-import ${rel} (imports ${spec}: production code must not depend on tools/)`);
    if (!target.startsWith(SRC + '/') && !target.startsWith(TOOLS + '/')) continue;
    const from = nodeOf(file);
    const to = nodeOf(target.replace(/\.js$/, '.ts'));
    if (from !== to && !edges.has(`${from} -> ${to}`)) edges.set(`${from} -> ${to}`, { from, to, example: `${rel} imports ${spec}` });
  }
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (end - start + 1 > MAX_FUNCTION_LINES) violations.push(`function-lines ${rel} ${functionName(node, sf)} (${end - start + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// Folder cycles: every edge inside a strongly connected component of more than one node.
const nodes = [...new Set([...edges.values()].flatMap((e) => [e.from, e.to]))].sort();
const out = new Map(nodes.map((n) => [n, [...edges.values()].filter((e) => e.from === n).map((e) => e.to)]));
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const component = new Map<string, number>();
let counter = 0;
let components = 0;
function strongConnect(v: string): void {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  for (const w of out.get(v) ?? []) {
    if (!index.has(w)) {
      strongConnect(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (!component.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      component.set(w, components);
      if (w === v) break;
    }
    components++;
  }
}
for (const n of nodes) if (!index.has(n)) strongConnect(n);
for (const e of [...edges.values()].sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`))) {
  if (component.get(e.from) === component.get(e.to)) violations.push(`import-cycle ${e.from} -> ${e.to} (${e.example})`);
}

/** A violation's key in the allow-list: without the measurement in brackets, so a file that grows or shrinks keeps its entry. */
const keyOf = (v: string) => v.replace(/ \(.*\)$/, '');

if (process.argv.includes('--write-allow')) {
  const header = '# Violations of scripts/check-imports.ts known when it was written: each line is allowed until fixed. Remove lines, never add them.\n';
  writeFileSync(ALLOW, header + [...new Set(violations.map(keyOf))].sort().join('\n') + '\n');
  console.log(`wrote ${violations.length} entries to ${relative(ROOT, ALLOW)}`);
  process.exit(0);
}

const allowed = new Set(
  existsSync(ALLOW)
    ? readFileSync(ALLOW, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [],
);
const fresh = violations.filter((v) => !allowed.has(keyOf(v)));
const known = violations.filter((v) => allowed.has(keyOf(v)));
const fixed = [...allowed].filter((a) => !violations.some((v) => keyOf(v) === a));
if (known.length) console.log(`${known.length} known violations (scripts/check-imports.allow):\n${known.map((v) => `  ${v}`).join('\n')}`);
if (fixed.length) console.log(`fixed, remove from scripts/check-imports.allow:\n${fixed.map((v) => `  ${v}`).join('\n')}`);
if (fresh.length) {
  console.error(`${fresh.length} new violations (folders must not import each other; files <= ${MAX_FILE_LINES} lines; functions <= ${MAX_FUNCTION_LINES} lines):\n${fresh.map((v) => `  ${v}`).join('\n')}`);
  process.exit(1);
}
console.log('check:imports: no new violations');
