// @ts-check
/**
 * The adapter's clock in the driver: its timers, `Date`, `performance.now()`, `process.hrtime` and
 * `AbortSignal.timeout` run on real time plus the seconds the replay host let the run skip (replay.js), as the
 * Python worker's loop does (replay/clock.py). A timer fires in order and at its time on this clock; when the
 * host grants a jump (nothing but timers can happen: the adapter is idle, no byte is in flight), the clock
 * advances and the timers now due fire at once, at no wall time. With no jump granted, timers fire in real
 * time, as before: a hang is still cut off by the harness's real-time limit.
 *
 * Installed once, before the adapter is imported, on the globals and on `node:timers` /
 * `node:timers/promises` (so named imports see it too). Like `@sinonjs/fake-timers` it replaces the timer
 * functions and `Date`; unlike it, time also passes by itself, and the clock only jumps when told to.
 * `setImmediate`, `queueMicrotask` and `process.nextTick` stay real: they are not waits.
 */

import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
/** @type {typeof import('node:timers')} */
const timersModule = require('node:timers');
/** @type {typeof import('node:timers/promises')} */
const timersPromises = require('node:timers/promises');

/** The real functions, for the driver's own waits and for this clock's one real timer. */
export const real = Object.freeze({
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setImmediate: globalThis.setImmediate,
  Date: globalThis.Date,
  now: performance.now.bind(performance),
  hrtimeBigint: process.hrtime.bigint,
});

export class FakeTimer {
  /**
   * @param {VirtualClock} clock
   * @param {number} id
   * @param {(...args: any[]) => void} callback
   * @param {number} delay
   * @param {any[]} args
   * @param {boolean} repeat
   */
  constructor(clock, id, callback, delay, args, repeat) {
    this.clock = clock;
    this.id = id;
    this.callback = callback;
    this.delay = delay;
    this.args = args;
    this.repeat = repeat;
    this.due = clock.now() + delay;
    this.refed = true;
    this.live = true;
    /** Made by the runtime's own API on the adapter's behalf (`AbortSignal.timeout`), not by its code. */
    this.internal = false;
  }

  ref() {
    this.refed = true;
    return this;
  }

  unref() {
    this.refed = false;
    return this;
  }

  hasRef() {
    return this.refed;
  }

  refresh() {
    if (this.live) {
      this.due = this.clock.now() + this.delay;
      this.clock.schedule();
    }
    return this;
  }

  close() {
    this.clock.clear(this);
    return this;
  }

  [Symbol.toPrimitive]() {
    return this.id;
  }
}

/**
 * Milliseconds the thread that made it (the driver's main thread, the adapter's) has waited for a CPU, as
 * replay/starvation.py reads it: the second field of `/proc/thread-self/schedstat`, runnable but not running.
 * On a loaded machine that wait reaches a second; an adapter's idle timer must not count it as the provider's
 * silence. 0 where it cannot be read (not Linux).
 */
export class StarvationMeter {
  constructor() {
    /** @type {number | undefined} */
    this.fd = undefined;
    this.buffer = Buffer.alloc(128);
    this.lastNs = 0;
    try {
      this.fd = openSync('/proc/thread-self/schedstat', 'r'); // names this thread, whoever reads it later
    } catch {
      this.fd = undefined;
    }
    this.baseNs = this.readNs();
  }

  readNs() {
    if (this.fd !== undefined) {
      try {
        const n = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
        const field = this.buffer.toString('latin1', 0, n).split(' ')[1];
        const ns = Number(field);
        if (Number.isFinite(ns)) this.lastNs = ns;
      } catch {
        this.close(); // the last reading stands from now on
      }
    }
    return this.lastNs;
  }

  /** Milliseconds waited for a CPU since the meter was made. */
  waitedMs() {
    return Math.max(0, this.readNs() - this.baseNs) / 1e6;
  }

  close() {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // gone already
      }
    }
  }
}

/** The clock reads the meter at most this often (ms), as replay/starvation.py's SAMPLE_EVERY_S. */
const SAMPLE_EVERY_MS = 2;

/** @param {unknown} ms */
function delayOf(ms) {
  const n = Number(ms);
  return Number.isFinite(n) && n >= 1 && n <= 2 ** 31 - 1 ? n : 1; // Node's rule: 1 ms for anything else
}

export class VirtualClock {
  constructor() {
    /** Milliseconds skipped so far (granted by the replay host). */
    this.skippedMs = 0;
    /** While positive, no timer fires (a report to the host awaits its answer: nothing may happen meanwhile). */
    this.held = 0;
    /** @type {Map<number, FakeTimer>} */
    this.timers = new Map();
    this.nextId = 1;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.driver = undefined;
    /** @type {number | undefined} */
    this.driverDue = undefined;
    /** Called after timers fired (the link looks at the adapter again). */
    this.onFired = () => {};
    /** Called with each new timer (leftovers.js names those an adapter leaves scheduled, HARN-04). */
    this.onAdd = (/** @type {FakeTimer} */ _timer) => {};
    /** Whether the machine's load is left off the clock (a run in virtual time; replay.js sets it per run). */
    this.leaveOffLoad = false;
    /** Milliseconds the thread waited for a CPU while `leaveOffLoad`, left off the clock. */
    this.starvedMs = 0;
    /** @type {StarvationMeter | undefined} */
    this.meter = undefined;
    this.waitedMs = 0;
    this.sampledAt = -Infinity;
    this.lastNow = -Infinity;
    /** What the clock adds to real time now: the jumps, less the load left off (see `now`). */
    this.offsetMs = 0;
  }

  /**
   * Milliseconds on the run's monotonic clock: real time, plus the jumps, less the time the machine's load kept
   * the thread from running (read every few milliseconds, after the fact, so the clock never goes back: a wait
   * read late holds it still until real time catches up).
   */
  now() {
    const realNow = real.now();
    if (realNow - this.sampledAt >= SAMPLE_EVERY_MS) {
      this.sampledAt = realNow;
      this.meter ??= new StarvationMeter();
      const waited = this.meter.waitedMs();
      if (this.leaveOffLoad) this.starvedMs += waited - this.waitedMs;
      this.waitedMs = waited;
    }
    let t = realNow + this.skippedMs - this.starvedMs;
    if (t < this.lastNow) t = this.lastNow;
    this.lastNow = t;
    this.offsetMs = t - realNow;
    return t;
  }

  /** What the run's clock adds to real time now (for `Date` and `process.hrtime`). */
  offset() {
    this.now();
    return this.offsetMs;
  }

  /** Milliseconds since the epoch on the run's clock. */
  wallNow() {
    return real.Date.now() + this.offset();
  }

  /**
   * @param {(...args: any[]) => void} callback
   * @param {unknown} ms
   * @param {any[]} args
   * @param {boolean} repeat
   */
  add(callback, ms, args, repeat) {
    if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
    const timer = new FakeTimer(this, this.nextId++, callback, delayOf(ms), args, repeat);
    this.timers.set(timer.id, timer);
    this.onAdd(timer);
    this.schedule();
    return timer;
  }

  /** @param {unknown} timer */
  clear(timer) {
    if (timer instanceof FakeTimer) {
      timer.live = false;
      this.timers.delete(timer.id);
    } else if (typeof timer === 'number' || typeof timer === 'string') {
      const found = this.timers.get(Number(timer));
      if (found) this.clear(found);
    } else if (timer != null) {
      real.clearTimeout(/** @type {any} */ (timer)); // a real timer of the driver's own
    }
  }

  /** The earliest live timer, if any. */
  earliest() {
    /** @type {FakeTimer | undefined} */
    let first;
    for (const timer of this.timers.values()) if (first === undefined || timer.due < first.due) first = timer;
    return first;
  }

  /** Milliseconds to the next timer (null: none). */
  nextDelay() {
    const first = this.earliest();
    return first === undefined ? null : Math.max(0, first.due - this.now());
  }

  /** Arm the one real timer for the earliest fake one. */
  schedule() {
    const first = this.earliest();
    if (first === undefined || this.held > 0) {
      if (this.driver !== undefined) real.clearTimeout(this.driver);
      this.driver = this.driverDue = undefined;
      return;
    }
    if (this.driver !== undefined && this.driverDue === first.due) return;
    if (this.driver !== undefined) real.clearTimeout(this.driver);
    this.driverDue = first.due;
    this.driver = real.setTimeout(() => {
      this.driver = this.driverDue = undefined;
      this.fireDue();
    }, Math.max(0, first.due - this.now()));
    this.driver.unref();
  }

  /** Fire every timer now due, in order; true if any fired. */
  fireDue() {
    let fired = false;
    while (this.held === 0) {
      const first = this.earliest();
      if (first === undefined || first.due > this.now()) break;
      fired = true;
      if (first.repeat) first.due += first.delay;
      else this.clear(first);
      try {
        first.callback(...first.args);
      } catch (err) {
        process.nextTick(() => {
          throw err; // as a real timer's exception: uncaught
        });
      }
    }
    this.schedule();
    if (fired) this.onFired();
    return fired;
  }

  /** @param {number} ms */
  advance(ms) {
    this.skippedMs += Math.max(0, ms);
    this.fireDue();
  }

  hold() {
    this.held += 1;
    this.schedule();
  }

  release() {
    this.held = Math.max(0, this.held - 1);
    if (this.held === 0) this.fireDue();
  }
}

/** @type {VirtualClock | undefined} */
let installed;

/**
 * The AbortError `timers/promises` rejects with when its signal aborts, the signal's reason as its cause.
 * @param {AbortSignal | undefined} signal
 */
function abortedBy(signal) {
  return Object.assign(new DOMException('The operation was aborted', 'AbortError'), { cause: signal?.reason });
}

/** The process's clock, installed on the globals and the timers modules on first call. */
export function virtualClock() {
  if (installed !== undefined) return installed;
  const clock = new VirtualClock();
  installed = clock;
  const setTimeoutFake = (/** @type {any} */ fn, /** @type {any} */ ms, /** @type {any[]} */ ...args) =>
    clock.add(fn, ms, args, false);
  const setIntervalFake = (/** @type {any} */ fn, /** @type {any} */ ms, /** @type {any[]} */ ...args) =>
    clock.add(fn, ms, args, true);
  const clearFake = (/** @type {unknown} */ timer) => clock.clear(timer);
  Object.assign(globalThis, {
    setTimeout: setTimeoutFake,
    clearTimeout: clearFake,
    setInterval: setIntervalFake,
    clearInterval: clearFake,
  });
  Object.assign(timersModule, {
    setTimeout: setTimeoutFake,
    clearTimeout: clearFake,
    setInterval: setIntervalFake,
    clearInterval: clearFake,
  });

  /**
   * `timers/promises`'s setTimeout: resolves with `value` after `ms` on the run's clock; rejects with an
   * AbortError when `options.signal` aborts first.
   * @param {unknown} ms
   * @param {unknown} [value]
   * @param {{signal?: AbortSignal, ref?: boolean}} [options]
   */
  const sleep = (ms, value, options = {}) =>
    new Promise((resolve, reject) => {
      const signal = options.signal;
      if (signal?.aborted) {
        reject(abortedBy(signal));
        return;
      }
      const onAbort = () => {
        clock.clear(timer);
        reject(abortedBy(signal));
      };
      const timer = clock.add(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        ms,
        [],
        false,
      );
      if (options.ref === false) timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  /**
   * `timers/promises`'s setInterval: yields `value` every `ms` on the run's clock, ticks the consumer has not
   * taken yet counted as Node counts them; its timer is cleared when the iteration ends, and it throws an
   * AbortError when `options.signal` aborts.
   * @param {unknown} ms
   * @param {unknown} [value]
   * @param {{signal?: AbortSignal, ref?: boolean}} [options]
   */
  async function* every(ms, value, options = {}) {
    const signal = options.signal;
    if (signal?.aborted) throw abortedBy(signal);
    let ticks = 0;
    /** @type {(() => void) | undefined} */
    let wake;
    const timer = clock.add(
      () => {
        ticks += 1;
        wake?.();
      },
      ms,
      [],
      true,
    );
    if (options.ref === false) timer.unref();
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (true) {
        if (ticks === 0 && !signal?.aborted) await new Promise((resolve) => (wake = () => resolve(undefined)));
        wake = undefined;
        if (signal?.aborted) throw abortedBy(signal);
        for (; ticks > 0; ticks -= 1) yield value;
      }
    } finally {
      clock.clear(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
  Object.assign(timersPromises, { setTimeout: sleep, setInterval: every });
  if (timersPromises.scheduler) {
    Object.assign(timersPromises.scheduler, {
      wait: (/** @type {unknown} */ ms, /** @type {any} */ options) => sleep(ms, undefined, options),
    });
  }
  syncBuiltinESMExports();

  const RealDate = real.Date;
  /** @this {unknown} @param {any[]} args */
  function FakeDate(...args) {
    if (!new.target) return new RealDate(clock.wallNow()).toString();
    return args.length === 0 ? new RealDate(clock.wallNow()) : Reflect.construct(RealDate, args);
  }
  Object.setPrototypeOf(FakeDate, RealDate);
  FakeDate.prototype = RealDate.prototype;
  FakeDate.now = () => clock.wallNow();
  globalThis.Date = /** @type {DateConstructor} */ (/** @type {unknown} */ (FakeDate));

  performance.now = () => clock.now();
  const skippedNs = () => BigInt(Math.round(clock.offset() * 1e6));
  const hrtime = (/** @type {[number, number] | undefined} */ previous) => {
    const ns = real.hrtimeBigint() + skippedNs();
    const seconds = Number(ns / 1000000000n);
    const nanos = Number(ns % 1000000000n);
    if (!previous) return [seconds, nanos];
    let ds = seconds - previous[0];
    let dn = nanos - previous[1];
    if (dn < 0) {
      ds -= 1;
      dn += 1e9;
    }
    return [ds, dn];
  };
  hrtime.bigint = () => real.hrtimeBigint() + skippedNs();
  process.hrtime = /** @type {NodeJS.HRTime} */ (hrtime);

  AbortSignal.timeout = (ms) => {
    const controller = new AbortController();
    const timer = clock.add(
      () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      ms,
      [],
      false,
    );
    timer.internal = true;
    timer.unref();
    return controller.signal;
  };
  return clock;
}
