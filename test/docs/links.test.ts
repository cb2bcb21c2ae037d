import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** The operator's reading: the README and every page under docs/. */
const PAGES = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown outside fenced code blocks (a link or path inside a shell example is not a link). */
function prose(text: string): string {
  return text.replace(/^\s*```[\s\S]*?^\s*```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe('docs', () => {
  it('every relative link, and its anchor, resolves', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(page, 'utf8');
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const path = file === '' ? page : normalize(join(dirname(page), file));
        if (!existsSync(path)) {
          broken.push(`${page}: ${target} (no ${path})`);
          continue;
        }
        if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every code fence is closed', () => {
    const open = PAGES.filter((page) => readFileSync(page, 'utf8').split('\n').filter((l) => /^\s*```/.test(l)).length % 2 !== 0);
    expect(open).toEqual([]);
  });

  it('every file of the repository a page names exists', () => {
    const missing: string[] = [];
    for (const page of PAGES) {
      for (const m of readFileSync(page, 'utf8').matchAll(/`((?:src|test|docs|examples|bench|tools|scripts|migrations)\/[\w./-]+\.(?:ts|md|json|mjs|js))`/g)) {
        if (!existsSync(m[1]!)) missing.push(`${page}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every page under docs/ is in the README's table of contents", () => {
    const readme = readFileSync('README.md', 'utf8');
    const contents = readme.slice(readme.indexOf('## Contents'), readme.indexOf('\n## ', readme.indexOf('## Contents') + 1));
    expect(PAGES.filter((page) => page.startsWith('docs/') && !contents.includes(`](${page})`))).toEqual([]);
  });
});
