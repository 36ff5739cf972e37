/** The three provider packages, pointed at the context's base URL with a read-timeout fetch. */

import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import type { AdapterContext, Capability } from '@helix-conformance/driver';

import { VercelAIAdapter } from './adapter.js';
import { idleTimeoutFetch } from './fetch.js';

export const CAPABILITIES: Capability[] = ['thinking', 'parallel_tool_calls', 'retries', 'caching', 'abort'];

/** `base` with `suffix` appended unless it already ends with it (the harness hands the API's origin). */
function under(base: string, suffix: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith(suffix) ? trimmed : `${trimmed}${suffix}`;
}

/** OpenAI through the Chat Completions API (`.chat`), not the Responses API the provider defaults to. */
export function openaiChatAdapter(context: AdapterContext): VercelAIAdapter {
  const openai = createOpenAI({ apiKey: context.apiKey, baseURL: context.baseUrl, fetch: idleTimeoutFetch(context.timeoutMs) });
  return new VercelAIAdapter({ provider: 'openai', apiKey: context.apiKey, languageModel: (id) => openai.chat(id) });
}

export function anthropicAdapter(context: AdapterContext): VercelAIAdapter {
  const anthropic = createAnthropic({ apiKey: context.apiKey, baseURL: under(context.baseUrl, '/v1'), fetch: idleTimeoutFetch(context.timeoutMs) });
  return new VercelAIAdapter({ provider: 'anthropic', apiKey: context.apiKey, languageModel: (id) => anthropic.messages(id) });
}

export function geminiAdapter(context: AdapterContext): VercelAIAdapter {
  const google = createGoogleGenerativeAI({
    apiKey: context.apiKey,
    baseURL: under(context.baseUrl, '/v1beta'),
    fetch: idleTimeoutFetch(context.timeoutMs),
  });
  return new VercelAIAdapter({ provider: 'google', apiKey: context.apiKey, languageModel: (id) => google.languageModel(id) });
}
