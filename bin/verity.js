#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled server (run `npm run build` or `npm start` first).
import('../dist/server/cli/main.js').then((cli) => cli.main(process.argv.slice(2)));
