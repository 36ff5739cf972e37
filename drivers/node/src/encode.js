// @ts-check
/** Turning what an adapter hands back (results, callback arguments, errors) into protocol JSON, never throwing. */

const MAX_DEPTH = 100;
const MAX_CAUSE_DEPTH = 5;

/** Raised inside the encoder when a value cannot be represented; the caller turns it into `$unreadable`. */
export class Unreadable extends Error {}

/**
 * Encodes values for one run: the same Error object gets the same `ref` everywhere (STR-06 compares by identity).
 */
export class Encoder {
  constructor() {
    /** @type {WeakMap<object, number>} */
    this.refs = new WeakMap();
    this.next = 1;
  }

  /**
   * A JSON-safe copy of `value`, or `{"$unreadable": reason}` when it cannot be read.
   * @param {unknown} value
   * @returns {unknown}
   */
  encode(value) {
    try {
      return this.#value(value, 0, new Set());
    } catch (err) {
      return { $unreadable: describeFailure(err) };
    }
  }

  /**
   * @param {unknown} error
   * @param {number} causeDepth
   * @returns {Record<string, unknown>}
   */
  error(error, causeDepth = 0) {
    if (!(error instanceof Error)) {
      return { name: typeof error, message: safeString(error) };
    }
    let ref = this.refs.get(error);
    if (ref === undefined) {
      ref = this.next++;
      this.refs.set(error, ref);
    }
    /** @type {Record<string, unknown>} */
    const out = { name: read(error, 'name', 'Error'), message: read(error, 'message', ''), ref };
    for (const key of ['code', 'retryable', 'statusCode', 'category']) {
      const v = read(error, key, undefined);
      if (v !== undefined && v !== null && ['string', 'number', 'boolean'].includes(typeof v)) out[key] = v;
    }
    const cause = read(error, 'cause', undefined);
    if (cause !== undefined && causeDepth < MAX_CAUSE_DEPTH) out.cause = this.error(cause, causeDepth + 1);
    return out;
  }

  /**
   * @param {unknown} value
   * @param {number} depth
   * @param {Set<object>} path objects on the current path (cycle detection)
   * @returns {unknown}
   */
  #value(value, depth, path) {
    if (depth > MAX_DEPTH) throw new Unreadable(`nested deeper than ${MAX_DEPTH} levels`);
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return value;
      case 'number':
        if (!Number.isFinite(value)) throw new Unreadable(`the number ${value} has no JSON form`);
        return value;
      case 'undefined':
        return null;
      case 'bigint':
        throw new Unreadable(`a BigInt (${value}n) has no JSON form`);
      case 'function':
      case 'symbol':
        throw new Unreadable(`a ${typeof value} has no JSON form`);
    }
    if (value === null) return null;
    const obj = /** @type {object} */ (value);
    if (obj instanceof Error) return this.error(obj);
    if (path.has(obj)) throw new Unreadable('the value contains a cycle');
    path.add(obj);
    try {
      if (Array.isArray(obj)) return obj.map((item) => this.#value(item, depth + 1, path));
      if (typeof (/** @type {any} */ (obj).then) === 'function') throw new Unreadable('a Promise, not a value');
      /** @type {Record<string, unknown>} */
      const out = {};
      for (const key of Object.keys(obj)) {
        const item = /** @type {any} */ (obj)[key];
        if (item === undefined) continue; // JSON.stringify drops it too: absent, as TypeScript means it
        out[key] = this.#value(item, depth + 1, path);
      }
      return out;
    } finally {
      path.delete(obj);
    }
  }
}

/**
 * A property read that cannot throw (getters may).
 * @param {object} obj
 * @param {string} key
 * @param {unknown} fallback
 */
function read(obj, key, fallback) {
  try {
    const v = /** @type {any} */ (obj)[key];
    return v === undefined ? fallback : key === 'message' || key === 'name' ? safeString(v) : v;
  } catch {
    return fallback;
  }
}

/** @param {unknown} value */
export function safeString(value) {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** @param {unknown} err */
export function describeFailure(err) {
  if (err instanceof Unreadable) return err.message;
  return `reading it threw ${err instanceof Error ? `${err.name}: ${err.message}` : safeString(err)}`;
}

/**
 * What `raised` carries when generateStep throws or rejects.
 * @param {unknown} thrown
 */
export function encodeRaised(thrown) {
  if (thrown instanceof Error) {
    return {
      name: read(thrown, 'name', 'Error'),
      message: read(thrown, 'message', ''),
      stack: read(thrown, 'stack', ''),
    };
  }
  return { name: typeof thrown, message: safeString(thrown), stack: '' };
}
