export * from './common.js';
export * from './keys.js';
export * from './files.js';
export * from './videos.js';
