// The module the harness loads: pytest --adapter=node:adapter.ts (tsx compiles it on the fly).
import type { AdapterContext, AdapterSpec } from '@helix-conformance/driver';

import { FetchChatAdapter } from './src/adapter.js';

export const spec: AdapterSpec = {
  name: 'fetch-template',
  wireProfile: 'openai-chat',
  model: 'gpt-4o-mini',
  capabilities: ['thinking', 'parallel_tool_calls', 'retries', 'caching', 'abort'], // claim only what you implement
  description: 'OpenAI Chat Completions on plain fetch: the template to copy',
};

export function createAdapter(context: AdapterContext): FetchChatAdapter {
  return new FetchChatAdapter({ apiKey: context.apiKey, baseUrl: context.baseUrl, idleTimeoutMs: context.timeoutMs });
}
