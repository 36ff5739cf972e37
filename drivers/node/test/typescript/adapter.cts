// A CommonJS module in TypeScript (.cts): module.exports, require() of Node's own modules.
const { setTimeout: sleep } = require('node:timers/promises') as typeof import('node:timers/promises');

const spec: { name: string; wireProfile: string; model: string } = { name: 'typescript-cts', wireProfile: 'gemini', model: 'cts-1' };

function createAdapter() {
  return {
    async generateStep(input: { messages: { content: string }[] }) {
      await sleep(1);
      return { type: 'text', content: `cts: ${input.messages.at(-1)?.content}`, shouldStop: true, stopReason: 'end_turn' };
    },
  };
}

module.exports = { spec, createAdapter };
