// The Control UI is served by the gateway at / and by the extension from its own pages: relative asset
// paths make one build work in both places.
import { defineConfig } from 'vite';

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 1200 },
  logLevel: 'warn',
});
