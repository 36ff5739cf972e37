// A WebAssembly compilation in flight is work the idle check cannot see in libuv (src/replay.js, watchCompiles).
// Its own file: the stub below must be in place before the first ReplayLink wraps WebAssembly.compile.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';

import { VirtualClock } from '../src/clock.js';
import { ReplayLink } from '../src/replay.js';
import { linkHost, listen, sleep } from './link-host.mjs';

const COMPILE_MS = 300;
// as a loaded machine makes undici's first compile of its parser: long past the idle check's turn
WebAssembly.compile = () => sleep(COMPILE_MS).then(() => /** @type {WebAssembly.Module} */ ({}));

test('no idle is reported while a WebAssembly compilation is in flight (undici between connect and request)', async () => {
  /** @type {net.Socket[]} */
  const accepted = [];
  const http = net.createServer((socket) => accepted.push(socket.on('error', () => {}))); // a peer gone is no failure here
  /** @type {number[]} */
  const idles = [];
  const control = linkHost((message, answer) => {
    if (message.t === 'idle') idles.push(performance.now());
    answer({ t: message.t === 'begin' ? 'begun' : 'wait', n: message.n });
  });
  const httpPort = await listen(http);
  const controlPort = await listen(control);
  const link = new ReplayLink(new VirtualClock());
  try {
    assert.equal(await link.begin({ controlPort, httpPort, token: 'run' }, () => {}), 'begun');
    const client = net.connect({ port: httpPort, host: '127.0.0.1' }); // connected, nothing written yet
    client.on('error', () => {});
    await new Promise((resolve) => client.once('connect', resolve));
    const started = performance.now();
    const compiled = WebAssembly.compile(new Uint8Array(0)).then(() => performance.now());
    const settledAt = await compiled;
    for (let i = 0; i < 300 && idles.length === 0; i += 1) await sleep(10); // a loaded machine may take a while
    assert.ok(settledAt - started >= COMPILE_MS - 5);
    assert.ok(idles.length > 0, 'idle once the compilation settled');
    assert.ok(idles.every((at) => at < started || at >= settledAt), `idle reported while compiling: ${idles.map((t) => t - started)}`);
    client.destroy();
  } finally {
    link.end();
    link.control?.destroy();
    http.close();
    control.close();
    for (const socket of accepted) socket.destroy();
  }
});
