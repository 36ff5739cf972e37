// Built from src/openai.ts by `npm install` (tsc): the module the harness loads.
export * from './dist/openai.js';
