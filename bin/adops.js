#!/usr/bin/env node
// The published entry point: runs the compiled CLI (built by `npm install` via the prepare script).
import { main } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`adops: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
