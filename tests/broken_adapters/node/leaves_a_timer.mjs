// HARN-04: starts a keep-alive heartbeat with the step and never stops it.
import { createAdapter as correct, spec as correctSpec } from '../../node_adapters/minimal_openai.mjs';

export const spec = { ...correctSpec, name: 'broken-leaves-a-timer' };

export function createAdapter(context) {
  const adapter = correct(context);
  return {
    async generateStep(input) {
      const heartbeat = setInterval(() => {}, 15000);
      void heartbeat; // meant to be cleared when the stream ends; it never is
      return adapter.generateStep(input);
    },
  };
}
