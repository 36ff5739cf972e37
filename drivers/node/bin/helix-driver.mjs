#!/usr/bin/env node
// The helix-conformance driver for JavaScript/TypeScript adapters: `helix-driver --fds 3,4` (protocol v2).
import { runDriver } from '../src/driver.js';

const usage = 'usage: helix-driver --fds R,W  (the harness starts it: pytest --adapter=node:path/to/adapter.mjs)';
const at = process.argv.indexOf('--fds');
const fds = at >= 0 ? process.argv[at + 1] ?? '' : '';
const match = /^(\d+),(\d+)$/.exec(fds);
if (!match) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
runDriver({ readFd: Number(match[1]), writeFd: Number(match[2]) });
