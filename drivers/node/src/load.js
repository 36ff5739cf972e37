// @ts-check
/** Finding and importing the adapter module named after `node:` on `--adapter`, and reading its spec. */

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { resolveImport } from './resolve.js';

/** A failure to load the adapter, with the `kind` the `error` message carries and a one-line message. */
export class LoadError extends Error {
  /**
   * @param {'adapter_not_found' | 'invalid_adapter' | 'unexpected'} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const TS_EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];
const SNAKE_KEYS = { wire_profile: 'wireProfile', api_key_env: 'apiKeyEnv', cassette_dir: 'cassetteDir' };

/**
 * @typedef {object} LoadedAdapter
 * @property {string} target the file the module was loaded from
 * @property {Record<string, unknown>} spec the spec as the `ready` message carries it (snake_case)
 * @property {(context: object) => unknown} createAdapter
 */

/**
 * @param {string} name a path (relative to `cwd`) or a package specifier
 * @param {string} cwd
 * @returns {Promise<LoadedAdapter>}
 */
export async function loadAdapter(name, cwd) {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new LoadError('adapter_not_found', 'no adapter module named: use --adapter=node:path/to/adapter.mjs');
  }
  const file = resolveModule(name, cwd);
  if (TS_EXTENSIONS.includes(path.extname(file))) await registerTypeScript(file, cwd);
  /** @type {Record<string, any>} */
  let module;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (err) {
    throw new LoadError('invalid_adapter', `importing ${file} failed: ${describe(err)}${moduleTypeHint(err, file)}`);
  }
  const source = module.spec !== undefined || module.createAdapter !== undefined ? module : module.default ?? {};
  const spec = readSpec(source.spec, file);
  if (typeof source.createAdapter !== 'function') {
    throw new LoadError(
      'invalid_adapter',
      `${file} exports no createAdapter function: add \`export function createAdapter(context) { return new MyAdapter(...) }\``,
    );
  }
  return { target: file, spec, createAdapter: source.createAdapter };
}

/**
 * @param {string} name
 * @param {string} cwd
 */
function resolveModule(name, cwd) {
  const looksLikePath = name.startsWith('.') || path.isAbsolute(name) || /\.[cm]?[jt]sx?$/.test(name);
  const candidate = path.resolve(cwd, name);
  if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  if (looksLikePath && !name.startsWith('@')) {
    throw new LoadError('adapter_not_found', `no adapter module at ${candidate}: check the path after node: (relative to ${cwd})`);
  }
  const imported = resolveImport(name, cwd); // what `import` loads: the package's ESM entry where it has one
  if (imported !== undefined && fs.existsSync(imported)) return imported;
  try {
    return createRequire(path.join(cwd, 'package.json')).resolve(name);
  } catch {
    throw new LoadError(
      'adapter_not_found',
      `cannot find the adapter module ${JSON.stringify(name)}: neither a file under ${cwd} nor a package installed there`,
    );
  }
}

/**
 * Node 20 cannot import TypeScript: register `tsx`'s ESM loader, found from the adapter's folder (its package),
 * then the working directory; without tsx, Node's own type stripping where this Node has it (22.18+, 23.6+).
 * @param {string} file
 * @param {string} cwd
 */
async function registerTypeScript(file, cwd) {
  for (const from of [path.dirname(file), cwd]) {
    const api = resolveImport('tsx/esm/api', from);
    if (api === undefined || !fs.existsSync(api)) continue;
    let register;
    try {
      ({ register } = await import(pathToFileURL(api).href));
    } catch (err) {
      throw new LoadError('invalid_adapter', `loading tsx from ${api} failed: ${describe(err)}`);
    }
    if (typeof register !== 'function') {
      throw new LoadError('invalid_adapter', `${api} exports no register function: install tsx >= 4 (\`npm install -D tsx\`)`);
    }
    register();
    return;
  }
  if (/** @type {any} */ (process.features).typescript) return; // Node strips the types itself
  throw new LoadError(
    'invalid_adapter',
    `${file} is TypeScript and Node ${process.version} cannot import it alone: \`npm install -D tsx\` in the adapter's package, or compile it to .js`,
  );
}

/**
 * @param {unknown} raw
 * @param {string} file
 * @returns {Record<string, unknown>}
 */
function readSpec(raw, file) {
  if (raw === null || typeof raw !== 'object') {
    throw new LoadError(
      'invalid_adapter',
      `${file} exports no spec object: add \`export const spec = { name, wireProfile, model, capabilities: [] }\``,
    );
  }
  const spec = /** @type {Record<string, unknown>} */ (raw);
  for (const [snake, camel] of Object.entries(SNAKE_KEYS)) {
    if (snake in spec) throw new LoadError('invalid_adapter', `${file}: spec.${snake} is spelled ${camel} in JavaScript`);
  }
  for (const key of ['name', 'wireProfile', 'model']) {
    if (typeof spec[key] !== 'string' || spec[key] === '') {
      throw new LoadError('invalid_adapter', `${file}: spec.${key} must be a non-empty string`);
    }
  }
  const capabilities = spec.capabilities ?? [];
  if (!Array.isArray(capabilities) || capabilities.some((c) => typeof c !== 'string')) {
    throw new LoadError('invalid_adapter', `${file}: spec.capabilities must be an array of strings`);
  }
  const servers = spec.servers ?? [];
  if (!Array.isArray(servers) || servers.some((c) => typeof c !== 'string')) {
    throw new LoadError('invalid_adapter', `${file}: spec.servers must be an array of server names (e.g. ['openai', 'deepseek'])`);
  }
  for (const key of ['description', 'apiKeyEnv', 'cassetteDir']) {
    if (spec[key] !== undefined && typeof spec[key] !== 'string') {
      throw new LoadError('invalid_adapter', `${file}: spec.${key} must be a string`);
    }
  }
  const cassetteDir = /** @type {string | undefined} */ (spec.cassetteDir);
  return {
    name: spec.name,
    wire_profile: spec.wireProfile,
    model: spec.model,
    capabilities,
    servers,
    description: spec.description ?? '',
    api_key_env: spec.apiKeyEnv ?? null,
    cassette_dir: cassetteDir === undefined ? null : path.resolve(path.dirname(file), cassetteDir),
  };
}

/**
 * `Name: the first line of the message`, for a one-line error.
 * @param {unknown} err
 */
function describe(err) {
  const e = /** @type {Error | undefined} */ (err);
  return `${e?.name ?? 'Error'}: ${firstLine(e?.message ?? err)}`;
}

/**
 * What to do when a `.ts`/`.js` adapter with `import` statements sits in a CommonJS package (`npm init` writes
 * `"type": "commonjs"`): tsx then loads it as CommonJS, and Node's own words ("Cannot require() ES Module ... in a
 * cycle") do not say that the package's type is the cause.
 * @param {unknown} err
 * @param {string} file
 * @returns {string} the hint, starting with a separator, or ''
 */
export function moduleTypeHint(err, file) {
  const code = /** @type {{code?: unknown} | undefined} */ (err)?.code;
  const cjsLoad = code === 'ERR_REQUIRE_CYCLE_MODULE' || code === 'ERR_REQUIRE_ESM' || code === 'ERR_REQUIRE_ASYNC_MODULE';
  if (!cjsLoad || !['.ts', '.js'].includes(path.extname(file))) return '';
  const type = packageType(path.dirname(file));
  if (type === 'module') return '';
  const where = type === undefined ? 'no package.json above it' : `its package.json says "type": "${type}"`;
  return ` (${path.basename(file)} was loaded as CommonJS: ${where}; an adapter written with \`import\` needs "type": "module" in its package.json, or the .mts extension)`;
}

/**
 * The `type` of the nearest package.json at or above `dir` ('commonjs' when it has none), undefined when none.
 * @param {string} dir
 * @returns {string | undefined}
 */
function packageType(dir) {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const type = JSON.parse(fs.readFileSync(path.join(at, 'package.json'), 'utf8')).type;
      return typeof type === 'string' ? type : 'commonjs';
    } catch (err) {
      if (/** @type {{code?: unknown}} */ (err).code !== 'ENOENT') return undefined;
    }
    if (path.dirname(at) === at) return undefined;
  }
}

/** @param {unknown} text */
function firstLine(text) {
  return String(text ?? '').split('\n')[0];
}
