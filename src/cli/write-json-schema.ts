import { writeFile } from 'node:fs/promises';
import { workflowsFileJsonSchema } from '../config/workflows-file.js';

const target = process.argv[2] ?? 'examples/workflows.schema.json';
await writeFile(target, `${JSON.stringify(workflowsFileJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target}`);
