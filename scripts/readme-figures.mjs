#!/usr/bin/env node
// `npm run readme:figures`: writes the generated figures of the README and docs/ (the files of
// bench/readme-table.ts's FIGURE_FILES) from bench/latest.md and test/last-run.json; run it after a full
// `npm test` or a partial bench.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeReadmeFigures } from '../dist/bench/readme-table.js';

writeReadmeFigures(join(dirname(fileURLToPath(import.meta.url)), '..'));
