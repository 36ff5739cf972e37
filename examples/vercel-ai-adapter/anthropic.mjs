// Built from src/anthropic.ts by `npm install` (tsc): the module the harness loads.
export * from './dist/anthropic.js';
