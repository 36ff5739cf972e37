// @ts-check
/** One `run`: build the adapter with the context, call generateStep `steps` times, report everything. */

import { recordingCallbacks } from './callbacks.js';
import { real } from './clock.js';
import { Encoder, encodeRaised, safeString } from './encode.js';
import { buildInput, snapshotInput } from './input.js';
import { seedRandom } from './seed.js';

/** The name of NT-03's abort, on the channel (`abort_sent`) and the link (worker/driver.py says the same). */
const CANCELLED_BY_HARNESS = 'cancelled by the harness';
/** How a run the harness could not replay starts its setup error (replay/runner.py HARNESS_FAILED). */
const HARNESS_FAILED = "helix-conformance's replay failed (a harness bug)";
/** Event-loop turns watched after the last return, so a callback fired by leftover work is reported (STR-07). */
const LATE_TURNS = 8;

/**
 * @typedef {object} RunState
 * @property {AbortController | undefined} controller
 * @property {string[]} uncaught
 * @property {boolean} active false once `done` is sent: late callbacks are no longer reported
 */

/**
 * @param {Record<string, any>} message the `run` message
 * @param {import('./load.js').LoadedAdapter} loaded
 * @param {(message: Record<string, unknown>) => void} send
 * @param {RunState} state
 * @param {import('./replay.js').ReplayLink} link
 */
export async function executeRun(message, loaded, send, state, link) {
  const id = message.id;
  seedRandom(message.seed);
  const encoder = new Encoder();
  const controller = state.controller;
  if (message.abortBefore && controller) controller.abort(abortReason('aborted before the step started'));
  const steps = Number.isInteger(message.steps) && message.steps > 0 ? message.steps : 1;
  const replay = message.replay;
  if (replay) {
    // The run's HTTP goes to its replay host; the link tells it when the adapter is idle (replay.js).
    const begun = await link.begin(
      replay,
      () => {
        if (controller && !controller.signal.aborted) controller.abort(abortReason('aborted by the harness mid-stream'));
      },
      () => {
        // NT-03 at the host's cancel point: a JavaScript step is cancelled by aborting its signal (a promise
        // cannot be stopped otherwise); said first, so what the abort causes comes after it.
        if (!controller || controller.signal.aborted) return;
        send({ type: 'abort_sent', id, name: CANCELLED_BY_HARNESS });
        link.mark('abort', CANCELLED_BY_HARNESS);
        controller.abort(abortReason('aborted by the harness mid-stream'));
      },
    );
    if (begun !== 'begun') {
      const why = begun === 'over' ? "never received the run's stage" : `answered '${begun}'`;
      finish(send, state, id, { setupError: `${HARNESS_FAILED}: the replay host ${why} when the run began` });
      return;
    }
  }
  let seq = 0;
  let textDeltas = 0;
  const callbacks = recordingCallbacks(message.callbacks ?? 'async', {
    record(name, args) {
      seq += 1;
      if (state.active) {
        send({ type: 'callback', id, seq, name, args: args.map((a) => encoder.encode(a)) });
        link.mark('callback', snakeCase(name));
      } else process.stderr.write(`helix-driver: ${name} called after run ${id} was over\n`);
      return seq;
    },
    settled(name, callSeq) {
      if (!state.active) return;
      send({ type: 'callback_done', id, seq: callSeq, name });
      link.mark('callback_done', snakeCase(name));
    },
    after(name) {
      if (name !== 'onTextDelta' || message.abortOnTextDelta == null || !controller) return;
      textDeltas += 1;
      if (textDeltas === message.abortOnTextDelta) {
        send({ type: 'abort_sent', id, name: 'from onTextDelta' });
        link.mark('abort', 'from on_text_delta');
        controller.abort(abortReason('aborted by the caller from onTextDelta'));
      }
    },
  }, message.callbackNames);

  /** @type {any} */
  let adapter;
  try {
    adapter = await loaded.createAdapter(adapterContext(message.context ?? {}));
  } catch (err) {
    link.end();
    finish(send, state, id, { setupError: `createAdapter threw ${describe(err)}` });
    return;
  }
  for (let step = 0; step < steps; step += 1) {
    if (replay) link.step(Number(replay.limitMs ?? 10000) / steps);
    const input = buildInput(message.input ?? {}, callbacks, message.withSignal === false ? undefined : controller?.signal);
    const inputBefore = snapshotInput(input);
    const started = real.now();
    const returned = (/** @type {Record<string, unknown>} */ fields) => {
      send({ type: 'returned', id, step, ...fields, inputBefore, inputAfter: snapshotInput(input), stepMs: real.now() - started });
      link.mark('returned');
    };
    let outcome;
    try {
      const generateStep = adapter?.generateStep;
      if (typeof generateStep !== 'function') {
        throw new TypeError(`the object createAdapter returned has no generateStep method (got ${safeString(adapter)})`);
      }
      outcome = generateStep.call(adapter, input);
      if (outcome === null || typeof outcome !== 'object' || typeof outcome.then !== 'function') {
        throw new TypeError(`generateStep returned ${typeof outcome}, not a Promise: make it an async method`);
      }
    } catch (err) {
      returned({ raised: encodeRaised(err) });
      break;
    }
    try {
      const result = await outcome;
      returned({ result: encoder.encode(result) });
    } catch (err) {
      returned({ raised: encodeRaised(err) });
      break;
    }
  }
  for (let turn = 0; turn < LATE_TURNS; turn += 1) await new Promise((resolve) => real.setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, Number(message.lateWaitMs ?? 1)));
  link.end();
  finish(send, state, id, {});
}

/** `onTextDelta` → `on_text_delta`: the trace's names, which the link's marks carry. @param {string} name */
function snakeCase(name) {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * @param {(message: Record<string, unknown>) => void} send
 * @param {RunState} state
 * @param {unknown} id
 * @param {Record<string, unknown>} fields
 */
function finish(send, state, id, fields) {
  send({ type: 'done', id, uncaught: state.uncaught, ...fields }); // driver.js adds `pending` and `output`
  state.active = false;
}

/**
 * The context `createAdapter` receives (AdapterContext in camelCase; `timeout` in seconds as in Python).
 * @param {Record<string, any>} raw
 */
function adapterContext(raw) {
  const timeout = typeof raw.timeout === 'number' ? raw.timeout : 60;
  return Object.freeze({
    apiKey: raw.apiKey,
    baseUrl: raw.baseUrl,
    timeout,
    timeoutMs: Math.round(timeout * 1000),
    recordMode: raw.recordMode ?? 'none',
    scriptedResponses: raw.scriptedResponses ?? [],
  });
}

/**
 * The reason a harness abort carries: the DOMException a plain `controller.abort()` would give, with a message.
 * @param {string} reason
 */
export function abortReason(reason) {
  return new DOMException(reason, 'AbortError');
}

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : safeString(err);
}
