// A minimal harness side of protocol v2 for the tests: start the driver on fds 3,4 and talk to it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = path.join(here, '..', 'bin', 'helix-driver.mjs');
export const FIXTURES = path.join(here, 'fixtures');

export function startDriver() {
  const child = spawn(process.execPath, [BIN, '--fds', '3,4'], { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
  const messages = [];
  const waiters = [];
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdio[4].setEncoding('utf8');
  child.stdio[4].on('data', (data) => {
    pending += data;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const msg = JSON.parse(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      messages.push(msg);
      for (const w of [...waiters]) w();
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    messages,
    exited,
    get stderr() {
      return stderr;
    },
    send(msg) {
      child.stdio[3].write(`${JSON.stringify({ v: 2, ...msg })}\n`);
    },
    /** Resolves with the first message (from `from` on) matching `pred`. */
    next(pred, { from = 0, timeoutMs = 5000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.slice(from).find(pred);
          if (found) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`no matching message in ${timeoutMs} ms; got ${JSON.stringify(messages)}; stderr ${stderr}`));
        }, timeoutMs);
        waiters.push(check);
        check();
      });
    },
    async hello(adapter, cwd = FIXTURES) {
      this.send({ type: 'hello', adapter, cwd });
      return this.next((m) => m.type === 'ready' || m.type === 'error');
    },
    /** Runs one scenario and resolves with its messages, `done` included. */
    async run(id, fields = {}) {
      const from = messages.length;
      this.send({ type: 'run', id, input: INPUT, context: CONTEXT, callbacks: 'async', withSignal: true, steps: 1, ...fields });
      await this.next((m) => m.type === 'done' && m.id === id, { from });
      return messages.slice(from).filter((m) => m.id === id);
    },
    close() {
      child.kill('SIGKILL');
    },
  };
}

export const INPUT = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'say hello world' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get', arguments: { q: null } }], thinking: null },
    { role: 'tool', toolCallId: 'c1', toolName: 'get', content: '{}' },
  ],
  tools: [{ name: 'get', description: 'Get a thing', jsonSchema: { type: 'object', properties: { q: { default: null } } }, strict: false }],
  config: { model: 'test-model', temperature: null, maxRetries: 0, caching: false, headers: null, providerOptions: null },
  agentId: 'agent-1',
  agentType: 'conformance',
};
export const CONTEXT = { apiKey: 'sk-dummy', baseUrl: 'http://127.0.0.1:9/v1', timeout: 2, scriptedResponses: [] };
