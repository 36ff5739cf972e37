/** Helix messages and tools → the Vercel AI SDK's ModelMessage[] and ToolSet (MSG, TOOL, CACHE clauses). */

import { jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import type { LLMConfig, Message, Tool } from '@helix-conformance/driver';

import { anthropicStrictSchema, strictSchema } from './schema.js';
import type { Provider } from './stop.js';

type ProviderOptions = Record<string, Record<string, any>>;
const EPHEMERAL: ProviderOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };

/**
 * The conversation in Vercel's shape. Anthropic with `caching: 'auto'` gets cache breakpoints on the system prompt
 * and the last message (CACHE-02; the last tool gets its own in `toTools`).
 */
export function toModelMessages(messages: Message[], provider: Provider, config: LLMConfig): ModelMessage[] {
  const cache = provider === 'anthropic' && config.caching === 'auto';
  const out: ModelMessage[] = [];
  for (const message of messages) {
    const converted = convert(message, provider);
    const previous = out.at(-1);
    if (provider !== 'openai' && isEmptyAssistant(converted)) continue; // MSG-06: Anthropic, Gemini reject it
    if (provider === 'google' && converted.role === 'user' && previous?.role === 'user') {
      out[out.length - 1] = { role: 'user', content: [...userParts(previous), ...userParts(converted)] }; // MSG-05
      continue;
    }
    out.push(converted);
  }
  if (cache) {
    const lastSystem = out.map((m) => m.role).lastIndexOf('system');
    if (lastSystem >= 0) out[lastSystem] = { ...out[lastSystem], providerOptions: EPHEMERAL } as ModelMessage;
    const last = out.length - 1;
    if (last >= 0 && out[last].role !== 'system') out[last] = { ...out[last], providerOptions: EPHEMERAL } as ModelMessage;
  }
  return out;
}

function isEmptyAssistant(message: ModelMessage): boolean {
  return message.role === 'assistant' && (message.content === '' || (Array.isArray(message.content) && message.content.length === 0));
}

type UserMessage = Extract<ModelMessage, { role: 'user' }>;

function userParts(message: UserMessage): Exclude<UserMessage['content'], string> {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function convert(message: Message, provider: Provider): ModelMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: message.toolCallId, toolName: message.toolName, output: { type: 'text', value: message.content } }],
      };
    case 'assistant': {
      const parts: Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string> = [];
      const thinking = message.thinking;
      if (thinking && provider === 'anthropic') {
        // MSG-08: Anthropic needs the signed thinking block (and redacted ones verbatim) back before tool use.
        if (thinking.content || thinking.signature) {
          parts.push({ type: 'reasoning', text: thinking.content, providerOptions: { anthropic: { signature: thinking.signature ?? '' } } });
        }
        for (const data of thinking.redacted ?? []) {
          parts.push({ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: data } } });
        }
      }
      if (message.content !== '') parts.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls ?? []) {
        parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
      }
      if (thinking?.signature && provider === 'google') {
        // MSG-08: Gemini wants its thought signature back on the first function call (or the first part).
        const target = parts.find((p) => p.type === 'tool-call') ?? parts.find((p) => p.type === 'text');
        if (target) target.providerOptions = { google: { thoughtSignature: thinking.signature } };
      }
      if (parts.length === 0) return { role: 'assistant', content: '' };
      return { role: 'assistant', content: parts };
    }
  }
}

/** Tools with their JSON Schema as is, and no `execute`: the framework runs tools, not streamText (TOOL-01/02). */
export function toTools(tools: Tool[], provider: Provider, config: LLMConfig): ToolSet | undefined {
  if (tools.length === 0) return undefined; // TOOL-04: no tools field at all
  const set: ToolSet = {};
  tools.forEach((t, index) => {
    const last = index === tools.length - 1;
    set[t.name] = tool({
      description: t.description,
      // TOOL-03: strict tools need closed objects (OpenAI: every property required too; Anthropic: what strict mode
      // lacks moved into the description, as its official SDK does); the Vercel SDK sends them as given.
      inputSchema: jsonSchema(
        (t.strict && provider === 'openai'
          ? strictSchema(t.inputSchema)
          : t.strict && provider === 'anthropic'
            ? anthropicStrictSchema(t.inputSchema)
            : structuredClone(t.inputSchema)) as Parameters<typeof jsonSchema>[0],
      ),
      ...(t.strict ? { strict: true } : {}),
      ...(last && provider === 'anthropic' && config.caching === 'auto' ? { providerOptions: EPHEMERAL } : {}),
    });
  });
  return set;
}
