/** Entry module for `pytest --adapter=node:examples/vercel-ai-adapter/openai.mjs` (wire profile openai-chat). */

import type { AdapterContext, AdapterSpec } from '@helix-conformance/driver';

import { openaiChatAdapter } from './providers.js';

export const spec: AdapterSpec = {
  name: 'vercel-ai-openai',
  wireProfile: 'openai-chat',
  model: 'gpt-4o-mini',
  // No 'thinking': OpenAI's Chat Completions API returns no reasoning, and @ai-sdk/openai's chat model reads none.
  capabilities: ['parallel_tool_calls', 'retries', 'caching', 'abort'],
  description: 'The seed-style VercelAIAdapter on the Vercel AI SDK (ai + @ai-sdk/openai, Chat Completions).',
};

export const createAdapter = (context: AdapterContext) => openaiChatAdapter(context);
