// TypeScript adapters as authors ship them, loaded by the driver: .ts, .mts and .cts through the tsx installed in
// their package (test/typescript, `npm ci` there: tests/test_node_driver.py does it), tsc's .js and .cjs output.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { FIXTURES, startDriver } from './helpers.mjs';

const PACKAGE = path.join(path.dirname(FIXTURES), 'typescript');
const installed = fs.existsSync(path.join(PACKAGE, 'node_modules', 'tsx')) && fs.existsSync(path.join(PACKAGE, 'dist', 'compiled.js'));
const skip = installed ? false : `test/typescript is not installed: run \`npm ci\` in ${PACKAGE} (needs the npm registry or its cache)`;

const ADAPTERS = [
  ['adapter.ts', 'typescript-ts', 'echo: say hello'],
  ['adapter.mts', 'typescript-mts', 'mts: say hello'],
  ['adapter.cts', 'typescript-cts', 'cts: say hello'],
  ['dist/compiled.js', 'typescript-compiled', 'compiled: say hello via http://127.0.0.1:9/v1'],
  ['dist/compiled-cjs.cjs', 'typescript-compiled-cjs', 'compiled-cjs: say hello'],
];

describe('TypeScript adapters', { skip }, () => {
  for (const [file, name, content] of ADAPTERS) {
    test(`${file} loads and runs`, async () => {
      const driver = startDriver();
      try {
        const ready = await driver.hello(file, PACKAGE);
        assert.equal(ready.type, 'ready', JSON.stringify(ready));
        assert.equal(ready.spec.name, name);
        assert.equal(ready.target, path.join(PACKAGE, file));
        const messages = await driver.run('t1', { input: { messages: [{ role: 'user', content: 'say hello' }], tools: [], config: { model: 'm', maxRetries: 0, caching: false }, agentId: 'a', agentType: 't' } });
        const returned = messages.find((m) => m.type === 'returned');
        assert.equal(returned.result?.content, content, JSON.stringify(returned));
      } finally {
        driver.close();
      }
    });
  }

  test('adapter.ts streams through its callbacks (tsx resolved ./words.js to words.ts)', async () => {
    const driver = startDriver();
    try {
      await driver.hello('adapter.ts', PACKAGE);
      const messages = await driver.run('t2', { input: { messages: [{ role: 'user', content: 'a b c' }], tools: [], config: { model: 'm', maxRetries: 0, caching: false }, agentId: 'a', agentType: 't' } });
      assert.deepEqual(messages.filter((m) => m.type === 'callback').map((m) => m.args[0]), ['a', ' b', ' c']);
    } finally {
      driver.close();
    }
  });
});
