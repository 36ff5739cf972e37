#!/usr/bin/env node
// The helix-conformance driver for JavaScript/TypeScript adapters: `helix-driver --fds 3,4` (protocol v2).

const MIN_NODE = [20, 6]; // module.register (tsx's loader), as engines.node says
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
  process.stderr.write(`helix-driver needs Node.js >= ${MIN_NODE.join('.')}; this is ${process.version}\n`);
  process.exit(2);
}

const usage = 'usage: helix-driver --fds R,W  (the harness starts it: pytest --adapter=node:path/to/adapter.mjs)';
const at = process.argv.indexOf('--fds');
const fds = at >= 0 ? process.argv[at + 1] ?? '' : '';
const match = /^(\d+),(\d+)$/.exec(fds);
if (!match) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const { runDriver } = await import('../src/driver.js'); // after the version check: older Nodes fail to parse it
runDriver({ readFd: Number(match[1]), writeFd: Number(match[2]) });
