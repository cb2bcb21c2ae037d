// After `tsc -p tsconfig.build.json` (which keeps src/ and migrations/ side by side
// under dist/): entry points at the documented paths, `node dist/main.js` and
// `node dist/cli/<command>.js`, each importing the compiled module.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';

mkdirSync('dist/cli', { recursive: true });
writeFileSync('dist/main.js', "import './src/main.js';\n");
for (const file of readdirSync('src/cli')) {
  if (!file.endsWith('.ts')) continue;
  writeFileSync(`dist/cli/${file.replace(/\.ts$/, '.js')}`, `import '../src/cli/${file.replace(/\.ts$/, '.js')}';\n`);
}
