// NT-03: declares 'abort' but never hands the caller's signal to its request: aborted mid-stream, it reads the
// response to the end and returns the whole text, as if nothing happened.
import { createAdapter as correct, spec as correctSpec } from '../../node_adapters/minimal_openai.mjs';

export const spec = { ...correctSpec, name: 'broken-swallows-cancellation' };

export function createAdapter(context) {
  const adapter = correct(context);
  return {
    async generateStep(input) {
      const { abortSignal: _ignored, ...rest } = input;
      return adapter.generateStep(rest);
    },
  };
}
