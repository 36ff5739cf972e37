// @ts-check
/**
 * Work an adapter leaves running after its step settled (HARN-04): timers (`setTimeout`, `setInterval`) and
 * immediates created during a run and still scheduled when its `done` is sent, each named with where it was
 * created. Node's own (the HTTP client's connection pool, fetch's timers: created in `node:` modules) and the
 * driver's own are not the adapter's and are not counted.
 *
 * The clock (clock.js) makes every timer, so it tells this module of each; `setImmediate` is watched by a
 * wrapper on the globals and `node:timers`. No async hook: one with `init` makes Node run a hook on every
 * promise, and an SDK built on web streams makes thousands per run.
 */

import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { real } from './clock.js';

const require = createRequire(import.meta.url);
/** @type {typeof import('node:timers')} */
const timersModule = require('node:timers');
/** The driver's sources, as frames name them: a path (CommonJS) or a file URL (ES modules). */
const DRIVER_SOURCES = [path.dirname(fileURLToPath(import.meta.url)) + path.sep, new URL('.', import.meta.url).href];
const TIMER_MACHINERY = /node:(internal\/)?(async_hooks|timers)(\/promises)?[:)]|node:internal\/process\/task_queues/;
const STACK_FRAMES = 4;

/**
 * Work created during a run, with the stack it was created on: taken when it is created (a few microseconds),
 * read and formatted only if the work is still scheduled when the run ends.
 * @typedef {object} Created
 * @property {object} run
 * @property {() => Scheduled | undefined} scheduled what is left of it when the run ends, if anything
 * @property {object} stack an object `Error.captureStackTrace` filled
 */

/**
 * @typedef {object} Scheduled
 * @property {'Timeout' | 'Immediate'} type
 * @property {{_idleTimeout?: number, _repeat?: unknown, hasRef?: () => boolean}} resource
 */

export class LeftoverWork {
  constructor() {
    /** @type {Set<Created>} */
    this.created = new Set();
    /** @type {object | undefined} */
    this.active = undefined;
  }

  /**
   * The fake clock's timers (clock.js): the clock tells each new timer here, and those the adapter created
   * during a run and left live are reported with the run's `end`.
   * @param {{onAdd: (timer: import('./clock.js').FakeTimer) => void}} clock
   */
  watchClock(clock) {
    clock.onAdd = (timer) => {
      if (this.active === undefined) return;
      /** @returns {Scheduled | undefined} */
      const scheduled = () => {
        if (!timer.live || timer.internal) return undefined;
        const resource = { _idleTimeout: timer.delay, _repeat: timer.repeat, hasRef: () => timer.hasRef() };
        return { type: 'Timeout', resource };
      };
      this.created.add({ run: this.active, scheduled, stack: stackHere(clock.onAdd) });
    };
  }

  /** `setImmediate` on the globals and `node:timers`: those the adapter calls during a run are watched. */
  watchImmediates() {
    const original = real.setImmediate;
    /** @type {typeof setImmediate} */
    const watched = Object.assign(
      /** @type {any} */ (
        (/** @type {(...args: any[]) => void} */ callback, /** @type {any[]} */ ...args) => {
          const immediate = original(callback, ...args);
          if (this.active !== undefined) {
            const resource = /** @type {any} */ (immediate);
            /** @returns {Scheduled | undefined} */
            const scheduled = () => (resource._destroyed ? undefined : { type: 'Immediate', resource });
            this.created.add({ run: this.active, scheduled, stack: stackHere(watched) });
          }
          return immediate;
        }
      ),
      original,
    );
    globalThis.setImmediate = watched;
    timersModule.setImmediate = watched;
    syncBuiltinESMExports();
  }

  /**
   * Count what is created from now on as `run`'s.
   * @param {object} run
   */
  begin(run) {
    this.active = run;
  }

  /**
   * What `run` left scheduled, described; it is no longer watched afterwards.
   * @param {object} run
   * @returns {string[]}
   */
  end(run) {
    if (this.active === run) this.active = undefined;
    /** @type {string[]} */
    const left = [];
    for (const created of this.created) {
      if (created.run !== run) continue;
      this.created.delete(created);
      const scheduled = created.scheduled();
      if (scheduled === undefined) continue;
      const frames = creationFrames(created.stack);
      if (frames.length > 0 && isAdapters(frames[0])) left.push(describe(scheduled, frames));
    }
    return left;
  }
}

/**
 * @param {Scheduled} scheduled
 * @param {string[]} frames
 */
function describe({ type, resource }, frames) {
  let what = 'setImmediate callback';
  if (type === 'Timeout') {
    const ms = Number(resource._idleTimeout);
    what = resource._repeat ? `setInterval every ${ms} ms` : `setTimeout of ${ms} ms`;
    if (typeof resource.hasRef === 'function' && !resource.hasRef()) what += ' (unref)';
  }
  const shown = frames.filter((frame) => !DRIVER_SOURCES.some((source) => frame.includes(source))).slice(0, STACK_FRAMES);
  return `${what}, created at ${shown.join(' < ')}`;
}

/**
 * The stack below `caller`, captured but not yet formatted: V8 builds call sites only when `stack` is read.
 * @param {Function} caller
 */
function stackHere(caller) {
  const holder = {};
  Error.captureStackTrace(holder, caller);
  return holder;
}

/**
 * The frames of a captured stack below the timer machinery and the driver: the first is the code that scheduled
 * it. Read as call sites, not a formatted stack; none past the first when the first is not the adapter's.
 * @param {object} holder
 * @returns {string[]}
 */
function creationFrames(holder) {
  const saved = Error.prepareStackTrace;
  /** @type {unknown} */
  let taken;
  try {
    Error.prepareStackTrace = (_error, sites) => sites;
    taken = /** @type {{stack?: unknown}} */ (holder).stack;
  } finally {
    Error.prepareStackTrace = saved;
  }
  const sites = Array.isArray(taken) ? taken : [];
  /** @type {string[]} */
  const frames = [];
  for (const site of sites) {
    const frame = String(site);
    if (TIMER_MACHINERY.test(frame)) continue;
    if (frames.length === 0 && DRIVER_SOURCES.some((source) => frame.includes(source))) continue;
    if (frames.length === 0 && !isAdapters(frame)) return [frame];
    frames.push(frame);
  }
  return frames;
}

/**
 * Whether the frame that scheduled the work is the adapter's (its code or its packages), not Node's own modules
 * (`node:internal/deps/undici/...`: fetch's connection pool) nor the driver's.
 * @param {string} frame
 */
function isAdapters(frame) {
  if (/\(node:|^node:/.test(frame)) return false;
  return !DRIVER_SOURCES.some((source) => frame.includes(source));
}
