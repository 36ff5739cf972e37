// @ts-check
/**
 * Resolving a package specifier as `import` would from another folder: Node offers no API for that without a
 * flag (`import.meta.resolve` takes a parent only under `--experimental-import-meta-resolve`; `require.resolve`
 * applies the `require` conditions and finds a package's CommonJS entry, and tsx 4.23's CommonJS `tsx/esm/api`
 * fails to register its loader, whether imported or required).
 */

import fs from 'node:fs';
import path from 'node:path';

/** The conditions `import()` matches in a package's `exports`, in Node's order of preference per object. */
const IMPORT_CONDITIONS = new Set(['import', 'node', 'default', 'module-sync']);

/**
 * The file `import(specifier)` would load from a module in `fromDir`, or undefined when no package folder of
 * that name is in `fromDir`'s `node_modules` or a parent's, or the package does not export the subpath.
 * @param {string} specifier a bare specifier: `tsx/esm/api`, `@scope/pkg/sub`
 * @param {string} fromDir
 * @returns {string | undefined}
 */
export function resolveImport(specifier, fromDir) {
  const parts = specifier.split('/');
  const nameLength = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameLength).join('/');
  const subpath = ['.', ...parts.slice(nameLength)].join('/');
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    const root = path.join(dir, 'node_modules', name);
    const manifest = readManifest(path.join(root, 'package.json'));
    if (manifest !== undefined) return packageTarget(root, manifest, subpath);
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * @param {string} file
 * @returns {Record<string, any> | undefined}
 */
function readManifest(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * @param {string} root
 * @param {Record<string, any>} manifest
 * @param {string} subpath `.` or `./esm/api`
 */
function packageTarget(root, manifest, subpath) {
  const { exports } = manifest;
  if (exports === undefined || exports === null) {
    const file = subpath === '.' ? (manifest.main ?? 'index.js') : subpath;
    return path.join(root, file);
  }
  const bySubpath = typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
  const entry = bySubpath ? exports[subpath] : subpath === '.' ? exports : undefined;
  const target = conditional(entry);
  return target === undefined ? undefined : path.join(root, target);
}

/**
 * The first target of an `exports` entry whose conditions `import()` meets.
 * @param {unknown} entry
 * @returns {string | undefined}
 */
function conditional(entry) {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) {
    for (const item of entry) {
      const found = conditional(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (entry === null || typeof entry !== 'object') return undefined;
  for (const [condition, value] of Object.entries(entry)) {
    if (!IMPORT_CONDITIONS.has(condition)) continue;
    const found = conditional(value);
    if (found !== undefined) return found;
  }
  return undefined;
}
