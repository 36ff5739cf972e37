/** The Chat Completions request: Helix messages, tools and config → `POST /chat/completions`, streamed. */

import type { LLMGenerateInput, Message, Tool } from '@helix-conformance/driver';

import { PROVIDER } from './errors.js';

/** The JSON body. The input is only read, never mutated (MSG-07). */
export function requestBody(input: LLMGenerateInput): Record<string, unknown> {
  const { config } = input;
  const body: Record<string, unknown> = { model: config.model, messages: input.messages.map(message) };
  if (input.tools.length) body.tools = input.tools.map(tool); // TOOL-04: no tools → neither tools nor tool_choice
  const generation: Record<string, unknown> = {
    // CFG-01: unset → absent. Chat Completions has no top_k, so it is not sent
    max_completion_tokens: config.maxOutputTokens,
    temperature: config.temperature,
    top_p: config.topP,
    presence_penalty: config.presencePenalty,
    frequency_penalty: config.frequencyPenalty,
    stop: config.stopSequences,
    seed: config.seed,
  };
  for (const [name, value] of Object.entries(generation)) if (value !== undefined && value !== null) body[name] = value;
  if (config.caching === 'auto') body.prompt_cache_key = `helix-${input.agentId}`; // CACHE-03; CACHE-01 otherwise
  Object.assign(body, config.providerOptions?.[PROVIDER] ?? {}); // CFG-02
  body.stream = true; // MSG-10: this adapter parses a stream, whatever the provider options say
  body.stream_options ??= { include_usage: true };
  return body;
}

/** One Helix message as a Chat Completions message, content unchanged (MSG-01..04). */
function message(m: Message): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }; // MSG-04
  if (m.role === 'assistant' && m.toolCalls?.length) {
    // MSG-03: the same ids, names and arguments; MSG-06: no empty text beside the calls
    const calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    return { role: 'assistant', content: m.content || null, tool_calls: calls };
  }
  // Chat Completions has no field for past reasoning: `thinking` is not sent.
  return { role: m.role, content: m.content };
}

/** A function tool: name and description unchanged, `__finish__` like any other (TOOL-01, TOOL-02). */
function tool(t: Tool): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: t.name, description: t.description, parameters: t.inputSchema };
  if (t.strict) Object.assign(fn, { parameters: strictSchema(t.inputSchema), strict: true }); // TOOL-03
  return { type: 'function', function: fn };
}

const SUBSCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']);
const SUBSCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMAS = new Set(['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else']);

/**
 * A copy of a JSON Schema as OpenAI's strict mode wants it: objects closed, every property required. Recurses
 * through schema positions only (`enum`, `default`, `examples` values are left alone); new objects throughout.
 */
export function strictSchema(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = { ...schema };
  for (const [key, value] of Object.entries(schema)) {
    if (SUBSCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, strictSchema(sub)]));
    } else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map(strictSchema);
    } else if (SUBSCHEMAS.has(key)) {
      out[key] = strictSchema(value);
    }
  }
  if ('default' in out && out.default === null) delete out.default; // as the official SDK does
  const types = out.type;
  if ('properties' in out || types === 'object' || (Array.isArray(types) && types.includes('object'))) {
    const properties = out.properties;
    out.additionalProperties = false;
    out.required = properties && typeof properties === 'object' ? Object.keys(properties) : [];
  }
  return out;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Tool names the API refuses (TOOL-05): the step refuses them before sending anything. */
export function rejectedToolNames(tools: Tool[]): string[] {
  return tools.map((t) => t.name).filter((name) => !TOOL_NAME.test(name));
}
