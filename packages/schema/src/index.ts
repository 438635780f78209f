export * from './common.js';
export * from './keys.js';
