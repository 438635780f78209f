// The console's build: one page for /console (the API server serves dist/ there), its script and
// stylesheet as files of their own (the server's Content-Security-Policy allows no inline script or
// style), and no module-preload polyfill (it would be inline code the policy refuses anyway).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
