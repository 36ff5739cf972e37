// Built from src/gemini.ts by `npm install` (tsc): the module the harness loads.
export * from './dist/gemini.js';
