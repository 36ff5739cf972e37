/** Tool checks and schema shaping that the Vercel SDK leaves to its caller (TOOL-03, TOOL-05). */

import type { Tool } from '@helix-conformance/driver';

import type { Provider } from './stop.js';

/** The tool names each API accepts (OpenAI and Anthropic function names; Gemini function declarations). */
const TOOL_NAMES: Record<Provider, RegExp> = {
  openai: /^[a-zA-Z0-9_-]{1,64}$/,
  anthropic: /^[a-zA-Z0-9_-]{1,128}$/,
  google: /^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/,
};

/** The tools whose names the provider would refuse: TOOL-05 reports them before any request is sent. */
export function rejectedToolNames(tools: Tool[], provider: Provider): string[] {
  return tools.map((t) => t.name).filter((name) => !TOOL_NAMES[provider].test(name));
}

const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LISTS = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
const SINGLE = ['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else'];
type Schema = Record<string, unknown>;

/**
 * A copy of a JSON Schema as OpenAI strict mode wants it: every object closed and all its properties required
 * (https://platform.openai.com/docs/guides/function-calling, "strict mode"). `enum`/`default` values are untouched.
 */
export function strictSchema(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Schema = { ...(schema as Schema) };
  for (const [key, value] of Object.entries(schema as Schema)) {
    if (MAPS.includes(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value as Schema).map(([name, sub]) => [name, strictSchema(sub)]));
    } else if (LISTS.includes(key) && Array.isArray(value)) {
      out[key] = value.map(strictSchema);
    } else if (SINGLE.includes(key)) {
      out[key] = strictSchema(value);
    }
  }
  if ('default' in out && out.default === null) delete out.default;
  const types = out.type;
  if ('properties' in out || types === 'object' || (Array.isArray(types) && types.includes('object'))) {
    const properties = out.properties;
    out.additionalProperties = false;
    out.required = properties && typeof properties === 'object' ? Object.keys(properties) : [];
  }
  return out;
}

/** The string formats an Anthropic strict tool supports (the official SDK's `SupportedStringFormats`). */
const ANTHROPIC_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);

const isLiteral = (value: unknown): boolean => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/**
 * A copy of a JSON Schema as an Anthropic strict tool takes it, written as the official SDK's `transform_schema`
 * writes it (anthropic-sdk-python src/anthropic/lib/_parse/_transform.py): every object closed, and each keyword
 * strict mode lacks (numeric and string bounds, `pattern`, other `minItems`, unknown formats) moved into the
 * description (https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations).
 */
export function anthropicStrictSchema(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const rest: Schema = { ...(schema as Schema) };
  const take = (key: string): unknown => {
    const value = rest[key];
    delete rest[key];
    return value;
  };
  const out: Schema = {};
  const defs = take('$defs');
  if (defs && typeof defs === 'object') {
    out.$defs = Object.fromEntries(Object.entries(defs as Schema).map(([name, sub]) => [name, anthropicStrictSchema(sub)]));
  }
  const ref = take('$ref');
  if (ref !== undefined) {
    out.$ref = ref;
    return out;
  }
  let type = take('type');
  const [anyOf, oneOf, allOf] = [take('anyOf'), take('oneOf'), take('allOf')];
  if (Array.isArray(rest.enum) && rest.enum.length > 0 && rest.enum.every(isLiteral)) out.enum = take('enum');
  if ('const' in rest && isLiteral(rest.const)) out.const = take('const');
  const literals = 'enum' in out || 'const' in out;
  if (literals) type = undefined;
  if (Array.isArray(anyOf)) out.anyOf = anyOf.map(anthropicStrictSchema);
  else if (Array.isArray(oneOf)) out.anyOf = oneOf.map(anthropicStrictSchema);
  else if (Array.isArray(allOf)) out.allOf = allOf.map(anthropicStrictSchema);
  else if (type !== undefined) out.type = type;
  for (const key of ['description', 'title']) if (key in rest) out[key] = take(key);
  if (type === 'object' || 'properties' in rest) {
    const properties = (take('properties') ?? {}) as Schema;
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, anthropicStrictSchema(sub)]));
    delete rest.additionalProperties;
    out.additionalProperties = false;
    if ('required' in rest) out.required = take('required');
  } else if (type === 'string' && typeof rest.format === 'string' && ANTHROPIC_FORMATS.has(rest.format)) {
    out.format = take('format');
  } else if (type === 'array') {
    if ('items' in rest) out.items = anthropicStrictSchema(take('items'));
    if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take('minItems');
  }
  const left = Object.entries(rest);
  if (left.length > 0) {
    const note = `{${left.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(', ')}}`;
    out.description = typeof out.description === 'string' ? `${out.description}\n\n${note}` : note;
  }
  return out;
}
