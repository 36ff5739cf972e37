/** Entry module for `pytest --adapter=node:examples/vercel-ai-adapter/gemini.mjs` (wire profile gemini). */

import type { AdapterContext, AdapterSpec } from '@helix-conformance/driver';

import { CAPABILITIES, geminiAdapter } from './providers.js';

export const spec: AdapterSpec = {
  name: 'vercel-ai-gemini',
  wireProfile: 'gemini',
  model: 'gemini-2.5-flash',
  capabilities: CAPABILITIES,
  description: 'The seed-style VercelAIAdapter on the Vercel AI SDK (ai + @ai-sdk/google, Gemini API).',
};

export const createAdapter = (context: AdapterContext) => geminiAdapter(context);
