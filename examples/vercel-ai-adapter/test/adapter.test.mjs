// The Vercel adapter against a local HTTP server, without the harness: the mappings that are ours to get right.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';

import * as anthropic from '../anthropic.mjs';
import * as gemini from '../gemini.mjs';
import * as openai from '../openai.mjs';

let server;
let base;
const routes = new Map(); // path -> (req, res, body) => void
const requests = [];

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ url: req.url, headers: req.headers, body: body ? JSON.parse(body) : null });
      const route = [...routes.entries()].find(([prefix]) => req.url.startsWith(prefix));
      if (!route) {
        res.writeHead(404).end('{}');
        return;
      }
      route[1](req, res);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

const sse = (res, events) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(e);
  res.end();
};
const context = (baseUrl) => ({ apiKey: 'sk-test-secret-key', baseUrl, timeout: 1, timeoutMs: 1000, recordMode: 'none', scriptedResponses: [] });
const input = (extra = {}) => ({
  messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }],
  tools: [],
  config: { model: 'm', maxRetries: 0, caching: false },
  agentId: 'agent',
  agentType: 't',
  ...extra,
});
const recording = () => {
  const calls = [];
  const callbacks = {};
  for (const name of ['onTextDelta', 'onThinking', 'onToolCall', 'onError']) callbacks[name] = (...args) => void calls.push([name, ...args]);
  return { calls, callbacks };
};
const chunk = (obj) => `data: ${JSON.stringify(obj)}\n\n`;

test('openai: Chat Completions streamed; text deltas as they come; stop → end_turn', async () => {
  routes.set('/v1/chat/completions', (req, res) =>
    sse(res, [
      chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }),
      chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] }),
      'data: [DONE]\n\n',
    ]),
  );
  const { calls, callbacks } = recording();
  const result = await openai.createAdapter(context(`${base}/v1`)).generateStep(input({ callbacks }));
  assert.deepEqual(result, { type: 'text', content: 'Hello', shouldStop: true, stopReason: 'end_turn' });
  assert.deepEqual(calls, [['onTextDelta', 'Hel'], ['onTextDelta', 'lo']]);
  const sent = requests.at(-1);
  assert.equal(sent.url, '/v1/chat/completions');
  assert.equal(sent.body.stream, true);
  assert.deepEqual(sent.body.messages[0], { role: 'system', content: 'sys' });
});

test('openai: parallel tool calls in order, onToolCall after completion; __finish__ wins', async () => {
  const call = (index, id, name, args) => ({ index, id, type: 'function', function: { name, arguments: args } });
  routes.set('/v1/chat/completions', (req, res) =>
    sse(res, [
      chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [call(0, 'a', 'get', '{"n":1}'), call(1, 'b', 'put', '')] }, finish_reason: 'tool_calls' }] }),
      'data: [DONE]\n\n',
    ]),
  );
  const tools = [
    { name: 'get', description: 'g', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, strict: false },
    { name: 'put', description: 'p', inputSchema: { type: 'object', properties: {} }, strict: false },
  ];
  const { calls, callbacks } = recording();
  const result = await openai.createAdapter(context(`${base}/v1`)).generateStep(input({ tools, callbacks }));
  assert.equal(result.type, 'tool_calls');
  assert.deepEqual(result.toolCalls, [{ id: 'a', name: 'get', arguments: { n: 1 } }, { id: 'b', name: 'put', arguments: {} }]);
  assert.deepEqual(calls.map((c) => c[0]), ['onToolCall', 'onToolCall']);
});

test('anthropic: Messages API under /v1; stop_sequence keeps its own stop reason', async () => {
  const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  routes.set('/v1/messages', (req, res) =>
    sse(res, [
      ev('message_start', { message: { id: 'm', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', { delta: { stop_reason: 'stop_sequence', stop_sequence: 'X' }, usage: { output_tokens: 1 } }),
      ev('message_stop', {}),
    ]),
  );
  const result = await anthropic.createAdapter(context(base)).generateStep(input());
  assert.deepEqual(result, { type: 'text', content: 'Hi', shouldStop: true, stopReason: 'stop_sequence' });
  assert.equal(requests.at(-1).url, '/v1/messages');
  assert.deepEqual(requests.at(-1).body.system, [{ type: 'text', text: 'sys' }]);
});

test('gemini: streamGenerateContent under /v1beta; SAFETY → content_filter', async () => {
  routes.set('/v1beta/models/', (req, res) =>
    sse(res, [`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] }, finishReason: 'SAFETY', index: 0 }] })}\r\n\r\n`]),
  );
  const result = await gemini.createAdapter(context(base)).generateStep(input());
  assert.deepEqual(result, { type: 'text', content: 'partial', shouldStop: true, stopReason: 'content_filter' });
  assert.match(requests.at(-1).url, /^\/v1beta\/models\/m:streamGenerateContent\?alt=sse/);
});

test('HTTP 429 → provider_rate_limited, retryable, status kept, key redacted, onError once with it', async () => {
  routes.set('/v1/chat/completions', (req, res) =>
    res.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'slow down sk-test-secret-key', type: 'rate_limit' } })),
  );
  const { calls, callbacks } = recording();
  const result = await openai.createAdapter(context(`${base}/v1`)).generateStep(input({ callbacks }));
  assert.equal(result.type, 'error');
  assert.equal(result.error.code, 'provider_rate_limited');
  assert.equal(result.error.category, 'provider');
  assert.equal(result.error.retryable, true);
  assert.equal(result.error.statusCode, 429);
  assert.ok(!String(result.error).includes('sk-test-secret-key'), String(result.error));
  assert.deepEqual(calls, [['onError', result.error]]);
});

test('a stream that stalls ends by the read timeout as provider_timeout', async () => {
  routes.set('/v1/chat/completions', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] }));
  });
  const started = Date.now();
  const result = await openai.createAdapter(context(`${base}/v1`)).generateStep(input());
  assert.equal(result.type, 'error');
  assert.equal(result.error.code, 'provider_timeout');
  assert.ok(Date.now() - started < 3000);
});

test('an aborted signal: request_aborted, nothing sent', async () => {
  const count = requests.length;
  const controller = new AbortController();
  controller.abort(new DOMException('stop', 'AbortError'));
  const result = await openai.createAdapter(context(`${base}/v1`)).generateStep(input({ abortSignal: controller.signal }));
  assert.equal(result.error.code, 'request_aborted');
  assert.equal(result.error.retryable, false);
  assert.equal(requests.length, count);
});

test('an Anthropic strict tool is sent as the official SDK transforms it: closed objects, bounds in the description', async () => {
  const { anthropicStrictSchema } = await import('../dist/schema.js');
  const sent = anthropicStrictSchema({
    type: 'object',
    properties: {
      order_id: { type: 'string', pattern: '^ord_[0-9]+$' },
      items: { type: 'array', minItems: 2, items: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } } } },
    },
    required: ['order_id'],
  });
  assert.deepEqual(sent, {
    type: 'object',
    properties: {
      order_id: { type: 'string', description: '{pattern: "^ord_[0-9]+$"}' },
      items: {
        type: 'array',
        items: { type: 'object', properties: { qty: { type: 'integer', description: '{minimum: 1}' } }, additionalProperties: false },
        description: '{minItems: 2}',
      },
    },
    additionalProperties: false,
    required: ['order_id'],
  });
});
