// The link's side of the replay (src/replay.js), against a host the test plays: when an offered jump is taken.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';

import { VirtualClock } from '../src/clock.js';
import { ReplayLink } from '../src/replay.js';
import { linkHost, listen, sleep } from './link-host.mjs';

test('a jump offered after the host closed a connection is not taken before the adapter has seen the close', async () => {
  /** @type {net.Socket[]} */
  const accepted = [];
  const http = net.createServer((socket) => accepted.push(socket.on('error', () => {}))); // a peer gone is no failure here
  /** @type {string[]} */
  const said = [];
  const control = linkHost(async (message, answer) => {
    said.push(message.t);
    if (message.t === 'idle' && said.filter((t) => t === 'idle').length === 1) {
      accepted[0].resetAndDestroy(); // the host drops the adapter's connection...
      await sleep(50); // (the reset is in the adapter's kernel by now)
      answer({ t: 'quiet', n: message.n, d: 5, s: 0 }); // ...and then offers a jump
    } else if (message.t === 'begin') answer({ t: 'begun', n: message.n });
    else if (message.t === 'jump') answer({ t: 'advanced', n: message.n, d: message.d });
    else if (message.t === 'idle') answer({ t: 'wait', n: message.n });
  });
  const httpPort = await listen(http);
  const controlPort = await listen(control);
  const clock = new VirtualClock();
  const link = new ReplayLink(clock);
  try {
    assert.equal(await link.begin({ controlPort, httpPort, token: 'run' }, () => {}), 'begun');
    const client = net.connect({ port: httpPort, host: '127.0.0.1' }); // counted by the link
    client.on('error', () => {});
    for (let i = 0; i < 100 && said.filter((t) => t === 'idle').length < 2; i += 1) await sleep(20);
    assert.deepEqual(said.slice(0, 3), ['begin', 'idle', 'idle'], 'the offer was taken before the reset was seen');
    assert.equal(clock.skippedMs, 0);
  } finally {
    link.end();
    link.control?.destroy();
    http.close();
    control.close();
    for (const socket of accepted) socket.destroy();
  }
});

test('a run the host does not take is not begun, and a link the host closed is made again once', async () => {
  let connections = 0;
  const control = net.createServer((socket) => {
    socket.on('error', () => {}); // the link destroyed while an answer was on its way: no uncaught error
    connections += 1;
    if (connections === 1) {
      socket.destroy(); // the host closed the link before the run's begin
      return;
    }
    socket.setEncoding('utf8');
    socket.on('data', (data) => {
      for (const line of String(data).split('\n').filter(Boolean)) {
        const message = JSON.parse(line);
        if (message.t === 'begin') socket.write(`${JSON.stringify({ t: 'over', n: message.n })}\n`);
      }
    });
  });
  const controlPort = await listen(control);
  const link = new ReplayLink(new VirtualClock());
  try {
    assert.equal(await link.begin({ controlPort, httpPort: 1, token: 'run' }, () => {}), 'over');
    assert.equal(connections, 2);
    assert.equal(link.run, undefined);
  } finally {
    link.control?.destroy();
    control.close();
  }
});

test("a connection the run's refusing port refused is reported among the marks, where it happened (rf)", async () => {
  /** @type {Record<string, any>[]} */
  const reports = [];
  const control = linkHost((message, answer) => {
    reports.push(message);
    if (message.t === 'begin') answer({ t: 'begun', n: message.n });
    else if (message.t !== 'end') answer({ t: 'wait', n: message.n });
  });
  const controlPort = await listen(control);
  const refusing = net.createServer();
  const refusingPort = await listen(refusing);
  await new Promise((resolve) => refusing.close(resolve)); // nothing listens there now: connections are refused
  /** @param {number} port @returns {Promise<string>} */
  const attempt = (port) =>
    new Promise((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.on('error', (/** @type {any} */ error) => resolve(String(error.code)));
      socket.on('connect', () => resolve('connected'));
    });
  const link = new ReplayLink(new VirtualClock());
  try {
    assert.equal(await link.begin({ controlPort, httpPort: 1, refusingPort, token: 'run' }, () => {}), 'begun');
    assert.equal(await attempt(refusingPort), 'ECONNREFUSED');
    link.mark('callback', 'on_error');
    assert.equal(await attempt(refusingPort), 'ECONNREFUSED');
    link.mark('returned', 'ErrorStepResult');
    link.end();
    for (let i = 0; i < 100 && !reports.some((r) => r.t === 'end'); i += 1) await sleep(20);
    const ev = reports.flatMap((r) => r.ev ?? []);
    const rf = reports.flatMap((r) => {
      const before = reports.slice(0, reports.indexOf(r)).flatMap((earlier) => earlier.ev ?? []).length;
      return (r.rf ?? []).map((/** @type {number} */ at) => before + at);
    });
    assert.deepEqual(ev, [['callback', 'on_error'], ['returned', 'ErrorStepResult']]);
    assert.deepEqual(rf, [0, 1], 'each refusal among the marks where it happened');
  } finally {
    link.control?.destroy();
    control.close();
  }
});
