export * from './common.js';
export * from './keys.js';
export * from './models.js';
export * from './generations.js';
