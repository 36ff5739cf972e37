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
