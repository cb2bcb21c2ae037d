/**
 * Line numbers for the values of a JSON document, by path (`workflows[3].cron`),
 * so that a config error can point at the line at fault. Call only on text that
 * JSON.parse accepted.
 */
export function locateJsonPaths(text: string): Map<string, number> {
  return walkJson(text).lines;
}

/**
 * Keys written twice in one object (`"cron"` twice in a workflow), each at
 * its second occurrence: JSON.parse keeps the last silently, so the first
 * one's settings were dropped without a word. Call only on text that
 * JSON.parse accepted.
 */
export function duplicateJsonKeys(text: string): { path: string; key: string; line: number }[] {
  return walkJson(text).duplicates;
}

function walkJson(text: string): { lines: Map<string, number>; duplicates: { path: string; key: string; line: number }[] } {
  const lines = new Map<string, number>();
  const duplicates: { path: string; key: string; line: number }[] = [];
  let i = 0;
  let line = 1;

  const skip = () => {
    while (i < text.length && /\s/.test(text[i]!)) {
      if (text[i] === '\n') line++;
      i++;
    }
  };
  const readString = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    skip();
    lines.set(path, line);
    const c = text[i];
    if (c === '{') {
      i++;
      skip();
      if (text[i] === '}') return void i++;
      const seen = new Set<string>();
      for (;;) {
        skip();
        const keyLine = line;
        const key = readString();
        const keyPath = path ? `${path}.${key}` : key;
        if (seen.has(key)) duplicates.push({ path: keyPath, key, line: keyLine });
        seen.add(key);
        skip();
        i++; // :
        value(keyPath);
        skip();
        if (text[i++] === '}') return;
      }
    }
    if (c === '[') {
      i++;
      skip();
      if (text[i] === ']') return void i++;
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        skip();
        if (text[i++] === ']') return;
      }
    }
    if (c === '"') return void readString();
    while (i < text.length && /[^\s,\]}]/.test(text[i]!)) i++;
  };
  value('');
  return { lines, duplicates };
}

/** `['workflows', 3, 'cron']` → `workflows[3].cron` */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)), '');
}

/** The value at a path, for quoting it back in an error. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}
