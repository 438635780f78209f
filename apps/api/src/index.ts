// The package's public surface: the router type for @switchyard/client, and the app factory.
export type { AppRouter } from './router.js';
export { appRouter } from './router.js';
export { createApp, API_PREFIX } from './app.js';
export { startServer, type RunningServer } from './server.js';
export { loadConfig, type Config } from './config.js';
