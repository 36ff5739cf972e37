// Imported by adapter.ts as './words.js', the TypeScript ESM convention tsx must resolve to this file.
export enum Mode {
  Echo = 'echo',
}

export function split(text: string): string[] {
  return text.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
}
