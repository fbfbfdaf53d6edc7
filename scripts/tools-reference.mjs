#!/usr/bin/env node
// Writes docs/tools.md from the built tools (npm run build first): `npm run docs:tools`.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { allTools } = await import(join(root, 'dist/server/tools/index.js'));
const { toolReference } = await import(join(root, 'dist/server/tools/reference.js'));
writeFileSync(join(root, 'docs/tools.md'), toolReference(allTools()));
process.stderr.write('docs/tools.md written\n');
