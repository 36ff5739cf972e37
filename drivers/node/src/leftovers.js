// @ts-check
/**
 * Work an adapter leaves running after its step settled (HARN-04): timers (`setTimeout`, `setInterval`) and
 * immediates created during a run and still scheduled when its `done` is sent, each named with where it was
 * created. Node's own (the HTTP client's connection pool, fetch's timers: created in `node:` modules) and the
 * driver's own are not the adapter's and are not counted.
 */

import async_hooks from 'node:async_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACKED = new Set(['Timeout', 'Immediate']);
/** The driver's sources, as frames name them: a path (CommonJS) or a file URL (ES modules). */
const DRIVER_SOURCES = [path.dirname(fileURLToPath(import.meta.url)) + path.sep, new URL('.', import.meta.url).href];
const TIMER_MACHINERY = /node:(internal\/)?(async_hooks|timers)(\/promises)?[:)]|node:internal\/process\/task_queues/;
const STACK_FRAMES = 4;

/**
 * @typedef {object} Scheduled
 * @property {string} type
 * @property {any} resource
 * @property {string[]} frames where it was created, innermost first
 */

export class LeftoverWork {
  constructor() {
    /** @type {Map<number, Scheduled>} */
    this.live = new Map();
    /** @type {Map<number, object>} resources by async id → the run they were created in */
    this.runOf = new Map();
    /** @type {object | undefined} */
    this.active = undefined;
    /** @type {Array<(run: object) => string[]>} */
    this.sources = [];
    // `init` alone: a `destroy` hook makes Node track the end of every promise (a weak callback each), a fifth
    // of a stream-heavy SDK's time; a timer or immediate that ran or was cleared says so (`_destroyed`) at `end`.
    this.hook = async_hooks.createHook({
      init: (asyncId, type, _trigger, resource) => {
        if (this.active === undefined || !TRACKED.has(type)) return;
        const frames = creationFrames();
        if (frames.length === 0 || !isAdapters(frames[0])) return;
        this.live.set(asyncId, { type, resource, frames });
        this.runOf.set(asyncId, this.active);
      },
    });
    this.hook.enable();
  }

  /**
   * Another way work is scheduled that async hooks do not see (a fake clock's timers): its report for a run
   * is added to `end`'s.
   * @param {(run: object) => string[]} source
   */
  addSource(source) {
    this.sources.push(source);
  }

  /**
   * A fake clock's timers (clock.js), which async hooks do not see: the clock tells each new timer here, and
   * those the adapter created during a run and left live are reported with the run's `end`.
   * @param {{onAdd: (timer: import('./clock.js').FakeTimer) => void}} clock
   */
  watchClock(clock) {
    /** @type {Map<import('./clock.js').FakeTimer, {run: object, frames: string[]}>} */
    const created = new Map();
    clock.onAdd = (timer) => {
      if (this.active === undefined) return;
      const frames = creationFrames(true); // the fake clock's own frames first: the driver's
      if (frames.length === 0 || !isAdapters(frames[0])) return;
      created.set(timer, { run: this.active, frames });
    };
    this.addSource((run) => {
      /** @type {string[]} */
      const left = [];
      for (const [timer, { run: owner, frames }] of created) {
        if (owner !== run) continue;
        created.delete(timer);
        if (!timer.live || timer.internal) continue;
        const resource = { _idleTimeout: timer.delay, _repeat: timer.repeat, hasRef: () => timer.hasRef() };
        left.push(describe({ type: 'Timeout', resource, frames }));
      }
      return left;
    });
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
    for (const [asyncId, owner] of this.runOf) {
      if (owner !== run) continue;
      const scheduled = this.live.get(asyncId);
      this.live.delete(asyncId);
      this.runOf.delete(asyncId);
      if (scheduled !== undefined && !scheduled.resource?._destroyed) left.push(describe(scheduled));
    }
    for (const source of this.sources) left.push(...source(run));
    return left;
  }
}

/** @param {Scheduled} scheduled */
function describe({ type, resource, frames }) {
  let what = 'setImmediate callback';
  if (type === 'Timeout') {
    const ms = Number(resource?._idleTimeout);
    what = resource?._repeat ? `setInterval every ${ms} ms` : `setTimeout of ${ms} ms`;
    if (typeof resource?.hasRef === 'function' && !resource.hasRef()) what += ' (unref)';
  }
  const shown = frames.filter((frame) => !DRIVER_SOURCES.some((source) => frame.includes(source))).slice(0, STACK_FRAMES);
  return `${what}, created at ${shown.join(' < ')}`;
}

const SELF = DRIVER_SOURCES.map((source) => `${source}leftovers.js`);

/**
 * The frames below the timer machinery and this module: the first is the code that scheduled it. Taken as call
 * sites, not a formatted stack (formatting every timer's stack was a tenth of a stream-heavy SDK's time), and
 * none when the first is not the adapter's: the rest is formatted only for work the adapter may leave behind.
 * @param {boolean} [belowDriver] skip the driver's frames on top (a fake clock's timer is made in clock.js)
 * @returns {string[]}
 */
function creationFrames(belowDriver = false) {
  const saved = Error.prepareStackTrace;
  /** @type {{stack?: unknown}} */
  const holder = {};
  /** @type {unknown} */
  let taken;
  try {
    Error.prepareStackTrace = (_error, sites) => sites;
    Error.captureStackTrace(holder, creationFrames);
    taken = holder.stack; // formatted when first read: while the call sites are what it gives
  } finally {
    Error.prepareStackTrace = saved;
  }
  const sites = Array.isArray(taken) ? taken : [];
  /** @type {string[]} */
  const frames = [];
  for (const site of sites) {
    const frame = String(site);
    if (TIMER_MACHINERY.test(frame) || SELF.some((file) => frame.includes(file))) continue;
    if (frames.length === 0 && belowDriver && DRIVER_SOURCES.some((source) => frame.includes(source))) continue;
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
