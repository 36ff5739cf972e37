// The driver's account of an adapter module that fails to import (src/load.js).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { moduleTypeHint } from '../src/load.js';

/** @param {Record<string, unknown> | undefined} pkg */
function adapterIn(pkg) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'helix-load-'));
  if (pkg) fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  fs.mkdirSync(path.join(dir, 'src'));
  return path.join(dir, 'src', 'adapter.ts');
}

const cycle = Object.assign(new Error('Cannot require() ES Module /x/adapter.ts in a cycle.'), { code: 'ERR_REQUIRE_CYCLE_MODULE' });

test('a TypeScript adapter in a CommonJS package is told to set "type": "module"', () => {
  const hint = moduleTypeHint(cycle, adapterIn({ name: 'a', type: 'commonjs' }));
  assert.match(hint, /loaded as CommonJS: its package\.json says "type": "commonjs"; .* needs "type": "module"/);
  assert.match(moduleTypeHint(cycle, adapterIn({ name: 'a' })), /"type": "commonjs"/); // no type: CommonJS
});

test('no hint where the package is ESM, or for another failure', () => {
  assert.equal(moduleTypeHint(cycle, adapterIn({ type: 'module' })), '');
  assert.equal(moduleTypeHint(new Error('boom'), adapterIn({ type: 'commonjs' })), '');
  assert.equal(moduleTypeHint(cycle, adapterIn({ type: 'commonjs' }).replace(/\.ts$/, '.mts')), '');
});
