// The driver against trivial adapters, over real pipes on fds 3 and 4, as the harness runs it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { FIXTURES, startDriver } from './helpers.mjs';

const kinds = (messages) => messages.map((m) => m.type);
const userSays = (content) => ({
  messages: [{ role: 'user', content }],
  tools: [],
  config: { model: 'b-1', maxRetries: 0, caching: false },
  agentId: 'a',
  agentType: 't',
});

describe('hello', () => {
  test('ready carries the spec in the harness snake_case, cassette_dir resolved against the module', async () => {
    const driver = startDriver();
    try {
      const ready = await driver.hello('echo.mjs');
      assert.equal(ready.type, 'ready');
      assert.equal(ready.v, 2);
      assert.equal(ready.runtime, `node ${process.version}`);
      assert.equal(ready.target, path.join(FIXTURES, 'echo.mjs'));
      assert.deepEqual(ready.spec, {
        name: 'echo',
        wire_profile: 'openai-chat',
        model: 'echo-1',
        capabilities: ['abort'],
        servers: ['openai', 'deepseek'],
        description: '',
        api_key_env: null,
        cassette_dir: path.join(FIXTURES, 'cassettes'),
      });
    } finally {
      driver.close();
    }
  });

  const failures = [
    ['missing.mjs', 'adapter_not_found', /no adapter module at .*missing\.mjs/],
    ['not-a-package', 'adapter_not_found', /cannot find the adapter module "not-a-package"/],
    ['bad/no-factory.mjs', 'invalid_adapter', /exports no createAdapter function/],
    ['bad/no-spec.mjs', 'invalid_adapter', /exports no spec object/],
    ['bad/snake.mjs', 'invalid_adapter', /spec\.wire_profile is spelled wireProfile/],
    ['bad/servers.mjs', 'invalid_adapter', /spec\.servers must be an array of server names/],
    ['bad/syntax.mjs', 'invalid_adapter', /importing .*syntax\.mjs failed: SyntaxError/],
    ['bad/typed.ts', 'invalid_adapter', /npm install -D tsx/],
  ];
  for (const [adapter, kind, message] of failures) {
    // Node 22.18+ strips types itself: a .ts adapter without tsx loads there (test/typescript.test.mjs has tsx)
    const skip = adapter.endsWith('.ts') && process.features.typescript ? `Node ${process.version} imports .ts itself` : false;
    test(`${adapter} → error ${kind} with a one-line message`, { skip }, async () => {
      const driver = startDriver();
      try {
        const answer = await driver.hello(adapter);
        assert.equal(answer.type, 'error');
        assert.equal(answer.kind, kind);
        assert.match(answer.message, message);
        assert.ok(!answer.message.includes('\n'), answer.message);
      } finally {
        driver.close();
      }
    });
  }

  test('a message of another protocol version is refused', async () => {
    const driver = startDriver();
    try {
      driver.child.stdio[3].write('{"v": 1, "type": "hello", "adapter": "echo.mjs"}\n');
      const answer = await driver.next((m) => m.type === 'error');
      assert.equal(answer.kind, 'version');
    } finally {
      driver.close();
    }
  });
});

describe('runs', () => {
  let driver;
  before(async () => {
    driver = startDriver();
    assert.equal((await driver.hello('echo.mjs')).type, 'ready');
  });
  after(() => driver.close());

  test('callbacks are reported as they are invoked, each settled when awaited, then the result', async () => {
    const messages = await driver.run('r1');
    assert.deepEqual(kinds(messages), ['callback', 'callback_done', 'callback', 'callback_done', 'callback', 'callback_done', 'returned', 'done']);
    const deltas = messages.filter((m) => m.type === 'callback');
    assert.deepEqual(deltas.map((m) => [m.seq, m.name, m.args]), [[1, 'onTextDelta', ['say']], [2, 'onTextDelta', [' hello']], [3, 'onTextDelta', [' world']]]);
    const returned = messages.find((m) => m.type === 'returned');
    assert.equal(returned.step, 0);
    assert.equal(returned.result.type, 'text');
    assert.equal(returned.result.content, 'say hello world');
    assert.equal(typeof returned.stepMs, 'number');
    assert.deepEqual(messages.at(-1).pending, []);
  });

  test('the input is the seed camelCase shape: nulls absent, tool schema as inputSchema, context in seconds and ms', async () => {
    const messages = await driver.run('r2');
    const { input, context } = messages.find((m) => m.type === 'returned').result.seen;
    assert.deepEqual(input.keys, ['abortSignal', 'agentId', 'agentType', 'callbacks', 'config', 'messages', 'tools']);
    assert.deepEqual(input.config, { model: 'test-model', maxRetries: 0, caching: false });
    assert.deepEqual(input.assistant, { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get', arguments: { q: null } }] });
    assert.deepEqual(input.tool, { name: 'get', description: 'Get a thing', inputSchema: { type: 'object', properties: { q: { default: null } } }, strict: false });
    assert.equal(input.aborted, false);
    assert.deepEqual(context, { apiKey: 'sk-dummy', baseUrl: 'http://127.0.0.1:9/v1', timeout: 2, timeoutMs: 2000, recordMode: 'none', scriptedResponses: [] });
  });

  test('inputBefore and inputAfter show an adapter that edits its input (MSG-07)', async () => {
    const returned = (await driver.run('r3')).find((m) => m.type === 'returned');
    assert.equal(returned.inputBefore.messages.length, 4);
    assert.equal(returned.inputAfter.messages.length, 5);
    assert.deepEqual(returned.inputAfter.messages.at(-1), { role: 'user', content: 'mutated' });
  });

  test('steps: every step gets a fresh input on the same adapter', async () => {
    const messages = await driver.run('r4', { steps: 2 });
    const returned = messages.filter((m) => m.type === 'returned');
    assert.deepEqual(returned.map((m) => [m.step, m.inputBefore.messages.length]), [[0, 4], [1, 4]]);
  });

  test("Math.random draws from the run's seed: the same numbers for the same seed, whatever ran before", async () => {
    const draws = async (id, fields) => (await driver.run(id, fields)).find((m) => m.type === 'returned').result.seen.draws;
    const first = await draws('s1', { seed: 1147454752 });
    await draws('s2', { seed: 7 });
    assert.deepEqual(await draws('s3', { seed: 1147454752 }), first);
    assert.notDeepEqual(await draws('s4', { seed: 7 }), first);
    assert.ok(first.every((x) => x >= 0 && x < 1));
  });

  test('sync callbacks report no settling; none hands no callbacks', async () => {
    assert.deepEqual(kinds(await driver.run('s1', { callbacks: 'sync' })), ['callback', 'callback', 'callback', 'returned', 'done']);
    const none = await driver.run('s2', { callbacks: 'none' });
    assert.deepEqual(kinds(none), ['returned', 'done']);
    assert.ok(!none[0].result.seen.input.keys.includes('callbacks'));
  });

  test('slow callbacks settle after their delay', async () => {
    const started = Date.now();
    const messages = await driver.run('s3', { callbacks: 'slow' });
    assert.equal(messages.filter((m) => m.type === 'callback_done').length, 3);
    assert.ok(Date.now() - started >= 55);
  });
});

describe('what adapters do wrong', () => {
  let driver;
  before(async () => {
    driver = startDriver();
    assert.equal((await driver.hello('behaviours.mjs')).type, 'ready');
  });
  after(() => driver.close());
  const run = (id, content, fields = {}) => driver.run(id, { input: userSays(content), ...fields });
  const returnedOf = (messages) => messages.find((m) => m.type === 'returned');

  test('tool calls and their callbacks keep JSON types', async () => {
    const messages = await run('t1', 'tools');
    assert.deepEqual(messages.filter((m) => m.type === 'callback').map((m) => m.args[0]), [
      { id: 'a', name: 'get', arguments: { n: 1, ok: true } },
      { id: 'b', name: 'put', arguments: {} },
    ]);
    assert.deepEqual(returnedOf(messages).result.toolCalls[0].arguments, { n: 1, ok: true });
  });

  test('an error result: the fields of HelixError, its cause, and one ref shared with onError', async () => {
    const messages = await run('e1', 'error');
    const passed = messages.find((m) => m.type === 'callback' && m.name === 'onError').args[0];
    const { error } = returnedOf(messages).result;
    assert.deepEqual(error, {
      name: 'HelixError',
      message: 'rate limited',
      ref: error.ref,
      code: 'provider_rate_limited',
      retryable: true,
      statusCode: 429,
      category: 'provider',
      cause: { name: 'Error', message: 'HTTP 429', ref: error.cause.ref },
    });
    assert.deepEqual(passed, error);
    assert.notEqual(error.ref, error.cause.ref);
  });

  for (const [content, name, message] of [
    ['throw', 'TypeError', 'boom'],
    ['throw-sync', 'Error', 'thrown before any await'],
    ['throw-string', 'string', 'a string'],
    ['not-a-promise', 'TypeError', 'generateStep returned number, not a Promise: make it an async method'],
  ]) {
    test(`${content}: reported as raised, the driver goes on`, async () => {
      const { raised, result } = returnedOf(await run(`x-${content}`, content));
      assert.equal(result, undefined);
      assert.equal(raised.name, name);
      assert.equal(raised.message, message);
    });
  }

  test('a result that has no JSON form is $unreadable with the reason', async () => {
    assert.deepEqual(returnedOf(await run('u1', 'cycle')).result, { $unreadable: 'the value contains a cycle' });
    assert.deepEqual(returnedOf(await run('u2', 'bigint')).result, { $unreadable: 'a BigInt (10n) has no JSON form' });
  });

  test('stray rejections and exceptions are reported in done, and the driver survives them', async () => {
    const messages = await run('st1', 'stray-rejection');
    assert.equal(returnedOf(messages).result.content, 'still here');
    assert.deepEqual(messages.at(-1).uncaught.sort(), ['uncaught exception: Error: thrown from a timer', 'unhandled rejection: Error: nobody listens']);
    assert.equal(returnedOf(await run('st2', 'tools')).result.type, 'tool_calls');
  });

  test('a callback fired after the return is reported after returned and before done (STR-07)', async () => {
    assert.deepEqual(kinds(await run('l1', 'late-callback')), ['returned', 'callback', 'done']);
  });

  test('a callback promise the adapter drops never settles (STR-08)', async () => {
    assert.deepEqual(kinds(await run('n1', 'no-await')), ['callback', 'returned', 'done']);
  });

  test('raising callbacks throw after they are reported (STR-11)', async () => {
    const messages = await run('rc1', 'raising-callback', { callbacks: 'raising' });
    assert.deepEqual(kinds(messages), ['callback', 'returned', 'done']);
    assert.equal(returnedOf(messages).result.content, 'CallbackRaised: helix-conformance: onTextDelta raises on purpose (STR-11)');
  });

  test('abort: the run AbortController is aborted with an AbortError DOMException carrying the reason', async () => {
    const from = driver.messages.length;
    driver.send({ type: 'run', id: 'ab1', input: userSays('wait-abort'), context: {}, callbacks: 'async', withSignal: true, steps: 1 });
    await driver.next((m) => m.type === 'callback' && m.id === 'ab1', { from });
    driver.send({ type: 'abort', id: 'ab1', reason: 'stop now' });
    await driver.next((m) => m.type === 'done' && m.id === 'ab1', { from });
    const messages = driver.messages.slice(from);
    assert.deepEqual(kinds(messages), ['callback', 'callback_done', 'abort_sent', 'returned', 'done']);
    assert.equal(messages[2].name, 'harness');
    assert.equal(messages[3].result.error.message, 'aborted: AbortError: stop now');
  });

  test('abortBefore aborts the signal before the step; withSignal false hands no signal', async () => {
    assert.equal(returnedOf(await run('ab2', 'abort-state', { abortBefore: true })).result.content, 'true');
    assert.equal(returnedOf(await run('ab3', 'abort-state')).result.content, 'false');
    assert.equal(returnedOf(await run('ab4', 'abort-state', { withSignal: false })).result.content, 'undefined');
  });

  test('abortOnTextDelta aborts inside the Nth onTextDelta and says so first (AB-02)', async () => {
    const messages = await run('ab5', 'wait-abort', { abortOnTextDelta: 1 });
    assert.deepEqual(kinds(messages), ['callback', 'abort_sent', 'callback_done', 'returned', 'done']);
    assert.match(returnedOf(messages).result.error.message, /aborted by the caller from onTextDelta/);
  });

  test('timers and immediates left scheduled are reported in done with where they were created (HARN-04)', async () => {
    const { pending } = (await run('lt1', 'leave-timers')).at(-1);
    assert.equal(pending.length, 4, JSON.stringify(pending));
    assert.match(pending[0], /^setTimeout of 60000 ms, created at .*keepAlive .*behaviours\.mjs:\d+/);
    assert.match(pending[1], /^setInterval every 30000 ms \(unref\), created at .*behaviours\.mjs:\d+/);
    assert.match(pending[2], /^setTimeout of 45000 ms, created at .*behaviours\.mjs:\d+/); // timers/promises
    assert.match(pending[3], /^setInterval every 15000 ms, created at .*behaviours\.mjs:\d+/); // its setInterval
    assert.deepEqual((await run('lt2', 'cleared-timers')).at(-1).pending, []); // fired, cleared, awaited: none
    assert.deepEqual((await run('lt3', 'fetch-pool')).at(-1).pending, []); // fetch's own pool timers are Node's
    const polling = (await run('lt4', 'polling-immediates')).at(-1).pending;
    assert.equal(polling.length, 1, JSON.stringify(polling));
    assert.match(polling[0], /^setImmediate callback, created at (Immediate\.)?poll .*behaviours\.mjs:\d+/);
  });

  test('thinking callbacks carry both arguments', async () => {
    const calls = (await run('th1', 'thinking')).filter((m) => m.type === 'callback');
    assert.deepEqual(calls.map((m) => m.args), [['hmm', false], ['', true]]);
  });

  test('a factory that throws ends the run with setupError', async () => {
    const messages = await driver.run('f1', { input: userSays('tools'), context: { apiKey: 'factory-throws' } });
    assert.deepEqual(kinds(messages), ['done']);
    assert.equal(messages[0].setupError, 'createAdapter threw RangeError: no key like that');
  });

  test('a garbled request line is answered with an error, and the driver goes on', async () => {
    const from = driver.messages.length;
    driver.child.stdio[3].write('not json\n');
    const answer = await driver.next((m) => m.type === 'error', { from });
    assert.equal(answer.kind, 'unexpected');
    assert.match(answer.message, /^a request line not JSON/);
    assert.equal(returnedOf(await run('g1', 'tools')).result.type, 'tool_calls');
  });
});

test('an adapter without generateStep is reported as raised', async () => {
  const driver = startDriver();
  try {
    assert.equal((await driver.hello('bad/no-generate-step.mjs')).type, 'ready');
    const returned = (await driver.run('ng')).find((m) => m.type === 'returned');
    assert.equal(returned.raised.name, 'TypeError');
    assert.match(returned.raised.message, /has no generateStep method/);
  } finally {
    driver.close();
  }
});

test('shutdown exits 0 at once; so does the harness closing the request pipe', async () => {
  const first = startDriver();
  first.send({ type: 'shutdown' });
  assert.deepEqual(await first.exited, { code: 0, signal: null });
  const second = startDriver();
  second.child.stdio[3].end();
  assert.deepEqual(await second.exited, { code: 0, signal: null });
});

test('without --fds the driver prints its usage and exits 2', async () => {
  const { spawnSync } = await import('node:child_process');
  const { BIN } = await import('./helpers.mjs');
  const out = spawnSync(process.execPath, [BIN], { encoding: 'utf8' });
  assert.equal(out.status, 2);
  assert.match(out.stderr, /usage: helix-driver --fds R,W/);
});

test("a run's output keeps its start and its end, and says how much of the middle it left out", async () => {
  const { RunOutput } = await import('../src/output.js');
  const output = new RunOutput();
  output.add('first line\n');
  for (let i = 0; i < 20000; i += 1) output.add(`noise ${i}\n`);
  output.add('last line\n');
  const text = output.text();
  assert.ok(text.startsWith('first line\nnoise 0\n'));
  assert.ok(text.endsWith('noise 19999\nlast line\n'));
  assert.match(text, /\[… \d+ characters of output left out …\]/);
  assert.ok(text.length < 70 * 1024, String(text.length));
});

test('what an adapter prints during a run comes back in done, not on the driver stderr', async () => {
  const driver = startDriver();
  try {
    assert.equal((await driver.hello('behaviours.mjs')).type, 'ready');
    const messages = await driver.run('p1', { input: { messages: [{ role: 'user', content: 'print' }], tools: [], config: { model: 'b-1', maxRetries: 0, caching: false }, agentId: 'a', agentType: 't' } });
    const { output } = messages.at(-1);
    assert.ok(output.startsWith('to stdout\nto stderr\n(node:'), output);
    assert.match(output, /DeprecationWarning: an SDK warns/);
    assert.ok(!driver.stderr.includes('to stderr'), driver.stderr);
  } finally {
    driver.close();
  }
});
