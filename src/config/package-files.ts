import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A file shipped beside the code (examples/, the bundled scenarios), found
 * from the package root: the nearest folder above this module holding a
 * package.json. The same answer whether the code runs from src/ under tsx
 * or from dist/src/ after `npm run build`.
 */
export function packageFile(relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return join(dir, relative);
}
