// NT-01: returns the right result, but reports usage to a telemetry call whose failure nobody catches: in an
// agent, Node ends the process on that unhandled rejection.
import { createAdapter as correct, spec as correctSpec } from '../../node_adapters/minimal_openai.mjs';

export const spec = { ...correctSpec, name: 'broken-unhandled-rejection' };

async function reportUsage() {
  throw new Error('telemetry endpoint unreachable');
}

export function createAdapter(context) {
  const adapter = correct(context);
  return {
    async generateStep(input) {
      const result = await adapter.generateStep(input);
      reportUsage(); // not awaited, no .catch()
      return result;
    },
  };
}
