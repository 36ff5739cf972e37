/** Entry module for `pytest --adapter=node:examples/vercel-ai-adapter/anthropic.mjs` (anthropic-messages). */

import type { AdapterContext, AdapterSpec } from '@helix-conformance/driver';

import { anthropicAdapter, CAPABILITIES } from './providers.js';

export const spec: AdapterSpec = {
  name: 'vercel-ai-anthropic',
  wireProfile: 'anthropic-messages',
  model: 'claude-haiku-4-5-20251001',
  capabilities: CAPABILITIES,
  description: 'The seed-style VercelAIAdapter on the Vercel AI SDK (ai + @ai-sdk/anthropic, Messages API).',
};

export const createAdapter = (context: AdapterContext) => anthropicAdapter(context);
