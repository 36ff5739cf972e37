// @ts-check
/**
 * The driver's side of the replay link (the harness's replay/host.py; the Python twin is replay/link.py).
 *
 * The adapter's HTTP goes to the run's replay host, on the judging side. The link is a second loopback
 * connection to that host, JSON lines both ways. Whenever the adapter is idle — a whole turn of the event loop
 * passed with nothing happening, no timer due, no request of libuv's pending — the link reports `idle` with
 * the events of the run so far (as marks: where each callback and return fell), the bytes written and read on
 * every connection to the host (`net` sockets, seen through `diagnostics_channel`), and the clock's next timer.
 * The host answers: it acted (sent the next chunk, or asks for the abort), it offers a jump of the clock to
 * the next timer (nothing in flight either way, nothing to send), or the run must wait in real time. While a
 * report waits for its answer no timer fires, so nothing happens on the adapter's side that the host has not
 * seen.
 */

import dc from 'node:diagnostics_channel';
import net from 'node:net';

import { real } from './clock.js';

/** libuv requests that finish on their own, without the host: while one is pending the adapter is not idle. */
const PENDING_WORK = new Set([
  'FSReqCallback',
  'FSReqPromise',
  'FileHandleCloseReq',
  'GetAddrInfoReqWrap',
  'GetNameInfoReqWrap',
  'QueryReqWrap',
  'ConnectWrap',
  'PipeConnectWrap',
  'ShutdownWrap',
  'WriteWrap',
  'Immediate',
  'ZlibContext',
  'PBKDF2Job',
  'RandomBytesJob',
  'ScryptJob',
  'HashJob',
  'SignJob',
]);
const BUSY_MAX_MS = 20;
/** A request pending this long (a busy background task of the adapter's) no longer holds the run up. */
const PATIENCE_MS = 50;

/** @typedef {{t: string, n?: number, d?: number, s?: unknown, do?: string[], acted?: boolean, credit?: boolean}} Answer */

/** WebAssembly compilations started and not settled (`watchCompiles`), and who is told when one settles. */
const compiles = { pending: 0, /** @type {Set<() => void>} */ settled: new Set() };

/**
 * Counts WebAssembly's asynchronous compilations, which run on V8's threads where `getActiveResourcesInfo` does
 * not see them: undici compiles its HTTP parser on a process's first connection, after connecting and before
 * writing the request, and on a loaded machine that outlasted the idle check's turn, so the host saw a quiet
 * connection and the clock jumped to the adapter's read timeout (a first run's timeout with no request sent).
 */
function watchCompiles() {
  const wasm = /** @type {Record<string, unknown> | undefined} */ (/** @type {any} */ (globalThis).WebAssembly);
  if (!wasm || wasm.helixWatched) return;
  wasm.helixWatched = true;
  const done = () => {
    compiles.pending -= 1;
    for (const notify of compiles.settled) notify();
  };
  for (const name of ['compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) {
    const original = wasm[name];
    if (typeof original !== 'function') continue;
    wasm[name] = function (/** @type {unknown[]} */ ...args) {
      compiles.pending += 1;
      /** @type {Promise<unknown>} */
      let promise;
      try {
        promise = original.apply(this, args);
      } catch (error) {
        done();
        throw error;
      }
      Promise.resolve(promise).then(done, done);
      return promise;
    };
  }
}

export class ReplayLink {
  /** @param {import('./clock.js').VirtualClock} clock */
  constructor(clock) {
    this.clock = clock;
    /** @type {Set<net.Socket>} */
    this.sockets = new Set();
    /** @type {net.Socket | undefined} */
    this.control = undefined;
    this.controlPort = 0;
    this.buffer = '';
    /** @type {((answer: Answer) => void) | undefined} */
    this.waiting = undefined;
    this.serial = 0;
    /** @type {{token: string, httpPort: number, refusingPort: number, virtual: boolean, deadline: number, credited: number, starvedBase: number, onAbort: () => void, onCancel: () => void} | undefined} */
    this.run = undefined;
    /** @type {[string, string][]} */
    this.marks = [];
    /** @type {number[]} connection attempts the run's refusing port refused, each as the marks before it (`rf`) */
    this.refused = [];
    this.activity = 0;
    this.seen = -1;
    this.scheduled = false;
    this.asking = false;
    this.backoff = 0;
    /** @type {number | undefined} */
    this.busySince = undefined;
    this.opening = false;
    clock.onFired = () => this.touch();
    watchCompiles();
    compiles.settled.add(() => this.touch());
    dc.subscribe('net.client.socket', (message) => this.track(/** @type {{socket: net.Socket}} */ (message).socket));
  }

  /**
   * A socket the adapter made: counted if it turns out to go to the host; its data wakes the idle check.
   * @param {net.Socket} socket
   */
  track(socket) {
    if (this.opening) return; // the link's own connection
    this.sockets.add(socket);
    const push = socket.push;
    socket.push = (/** @type {any} */ chunk, /** @type {any} */ encoding) => {
      this.touch();
      return push.call(socket, chunk, encoding);
    };
    /** @type {(event: string | symbol, ...args: any[]) => boolean} */
    const emit = socket.emit.bind(socket);
    socket.emit = (/** @type {string | symbol} */ event, /** @type {any[]} */ ...args) => {
      if (event === 'error') this.noteRefused(args[0]);
      return emit(event, ...args);
    };
    socket.once('connect', () => this.touch());
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.touch();
    });
  }

  /**
   * A socket's error: a connection the run's refusing port refused (a `connect_error` run's base URL) is an
   * attempt the host traces as the run's request.
   * @param {any} error
   */
  noteRefused(error) {
    const port = this.run?.refusingPort;
    if (port && error?.code === 'ECONNREFUSED' && error.port === port) {
      this.refused.push(this.marks.length);
      this.touch();
    }
  }

  /**
   * Connect to the host's link port (once per host), then name the run and wait until the host has it: the
   * adapter starts only after, so its clock does not run while the host waits for the run's stage.
   * @param {{controlPort: number, httpPort: number, refusingPort?: number, token: string, virtualTime?: boolean}} replay
   * @param {() => void} onAbort the host's abort plan fired
   * @param {() => void} [onCancel] the host's cancel point (NT-03) was reached
   * @returns {Promise<string>} the host's answer: `begun`, else `over` (its stage never came) or `lost`
   */
  async begin(replay, onAbort, onCancel = () => {}) {
    let answer = 'lost';
    for (let attempt = 0; attempt < 2 && answer === 'lost'; attempt += 1) {
      // a link the host closed since this process's last run: once more, on a new connection
      if (attempt > 0 || this.control === undefined || this.control.destroyed || this.controlPort !== replay.controlPort) {
        this.control?.destroy();
        this.control = await this.connect(replay.controlPort);
        this.controlPort = replay.controlPort;
      }
      this.marks = [];
      this.refused = [];
      this.clock.now(); // the load read up to here belongs to earlier runs
      this.run = { token: replay.token, httpPort: replay.httpPort, refusingPort: replay.refusingPort ?? 0, virtual: replay.virtualTime !== false, deadline: Infinity, credited: 0, starvedBase: this.clock.starvedMs, onAbort, onCancel };
      this.clock.leaveOffLoad = this.run.virtual; // --helix-real-time: the wall clock, load and all
      answer = (await this.ask({ t: 'begin' })).t;
    }
    if (answer !== 'begun') this.run = undefined;
    else this.touch();
    return answer;
  }

  /**
   * A step starts: the clock never jumps to a timer at or after its limit (but for a stall's credit, below).
   * @param {number} limitMs
   */
  step(limitMs) {
    if (this.run) this.run.deadline = this.clock.now() - this.run.credited + limitMs;
  }

  /**
   * An event of the adapter's side, in the trace's names (`callback`/`on_text_delta`, `returned`...).
   * @param {string} kind
   * @param {string} name
   */
  mark(kind, name = '') {
    if (this.run) this.marks.push([kind, name]);
    this.touch();
  }

  /** The run is over: its last marks, and no more reports. */
  end() {
    if (this.run) this.write({ t: 'end', run: this.run.token, ...this.takeMarks() });
    this.run = undefined;
  }

  /** @param {number} port @returns {Promise<net.Socket>} */
  connect(port) {
    return new Promise((resolve, reject) => {
      this.opening = true;
      const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
      this.opening = false;
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
      socket.setEncoding('utf8');
      socket.on('data', (/** @type {string} */ data) => this.answered(data));
      socket.on('close', () => {
        if (this.control === socket) this.control = undefined;
        this.waiting?.({ t: 'lost' });
      });
    });
  }

  /** @param {Record<string, unknown>} message */
  write(message) {
    this.control?.write(`${JSON.stringify(message)}\n`);
  }

  /** The events since the last report, as marks (`ev`), and the refused connection attempts among them (`rf`). */
  takeMarks() {
    const taken = { ev: this.marks, rf: this.refused };
    this.marks = [];
    this.refused = [];
    return taken;
  }

  /** Something happened on the adapter's side: look again once the event loop has gone round. */
  touch() {
    this.activity += 1;
    this.backoff = 0;
    if (!this.scheduled && this.run && !this.asking) {
      this.scheduled = true;
      real.setImmediate(() => this.check());
    }
  }

  /** @param {number} ms */
  later(ms) {
    if (this.scheduled) return;
    this.scheduled = true;
    real.setTimeout(() => this.check(), ms).unref();
  }

  connections() {
    const out = [];
    for (const socket of this.sockets) {
      if (socket.destroyed) {
        this.sockets.delete(socket);
        continue;
      }
      if (socket.connecting) out.push([null, 0, 0]);
      else if (socket.remotePort === this.run?.httpPort) out.push([socket.localPort ?? null, socket.bytesWritten, socket.bytesRead]);
    }
    return out;
  }

  /** The idle check: report when a whole turn passed with nothing happening. */
  async check() {
    this.scheduled = false;
    const run = this.run;
    if (!run || this.asking || this.control === undefined) return;
    if (this.clock.fireDue()) return; // touched again: looks once more after those timers
    if (this.activity !== this.seen) {
      this.seen = this.activity;
      this.scheduled = true;
      real.setImmediate(() => this.check()); // one more turn, quiet this time, before the report
      return;
    }
    if (compiles.pending > 0) {
      // always ends on its own, however long a loaded machine makes it: no patience, unlike the requests below
      this.backoff = Math.min(Math.max(this.backoff * 2, 0.25), BUSY_MAX_MS);
      this.later(this.backoff);
      return;
    }
    const pending = process.getActiveResourcesInfo().some((r) => PENDING_WORK.has(r));
    if (pending) {
      const now = real.now();
      this.busySince ??= now;
      if (now - this.busySince < PATIENCE_MS) {
        this.backoff = Math.min(Math.max(this.backoff * 2, 0.25), BUSY_MAX_MS);
        this.later(this.backoff);
        return;
      }
    } else {
      this.busySince = undefined;
    }
    const delay = this.clock.nextDelay();
    // Past the step's limit only a stall the host holds may credit a jump (the adapter's own read timeout).
    const beyond = delay !== null && this.clock.now() - run.credited + delay >= run.deadline;
    const jump = run.virtual && delay !== null && !pending;
    let answer = await this.ask({ t: 'idle', timer: delay === null ? null : delay / 1000, beyond, jump });
    if (answer.t === 'quiet' && this.run === run) {
      answer = (await this.settled()) ? await this.ask({ t: 'jump', d: answer.d, s: answer.s }) : { t: 'acted' };
    }
    if (this.run !== run) return;
    if (answer.t === 'advanced') {
      if (answer.credit) run.credited += (answer.d ?? 0) * 1000;
      this.clock.advance((answer.d ?? 0) * 1000);
    }
    if (answer.t === 'acted' || answer.t === 'advanced') this.touch();
    else if (answer.t === 'busy') {
      this.backoff = Math.min(Math.max(this.backoff * 2, 0.25), BUSY_MAX_MS);
      this.later(this.backoff);
    }
    // `wait`: nothing until something happens (data from the host, a timer in real time) touches the link
  }

  /**
   * Whether nothing happened on the adapter's side since its report, one more turn of the event loop included
   * (as the Python selector waits SETTLE_S after an offer): what the host did before it offered, a connection it
   * closed, is in this process's kernel already, and the adapter must see it before its timers may run ahead.
   * @returns {Promise<boolean>}
   */
  async settled() {
    this.asking = true; // no second check meanwhile: touches only count
    await new Promise((resolve) => real.setImmediate(resolve));
    this.asking = false;
    return this.activity === this.seen;
  }

  /**
   * One report and its answer; no timer fires meanwhile.
   * @param {Record<string, unknown>} message
   * @returns {Promise<Answer>}
   */
  ask(message) {
    const run = this.run;
    if (!run || this.control === undefined) return Promise.resolve({ t: 'lost' });
    this.asking = true;
    this.clock.hold();
    this.serial += 1;
    const n = this.serial;
    return new Promise((resolve) => {
      this.waiting = (answer) => {
        if (answer.t !== 'lost' && answer.n !== n) return;
        this.waiting = undefined;
        this.asking = false;
        for (const what of answer.do ?? []) {
          if (what === 'abort') run.onAbort();
          else if (what === 'cancel') run.onCancel();
        }
        this.clock.release();
        resolve(answer);
      };
      // the load the clock left off since the run began: the host's clock leaves it off too (one run clock)
      const st = (this.clock.starvedMs - run.starvedBase) / 1000;
      this.write({ ...message, run: run.token, n, st, ...this.takeMarks(), conns: this.connections() });
    });
  }

  /** @param {string} data */
  answered(data) {
    this.buffer += data;
    let newline;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      let answer;
      try {
        answer = JSON.parse(line);
      } catch {
        continue;
      }
      this.waiting?.(answer);
    }
  }
}

/** @type {ReplayLink | undefined} */
let link;

/** @param {import('./clock.js').VirtualClock} clock */
export function replayLink(clock) {
  link ??= new ReplayLink(clock);
  return link;
}
