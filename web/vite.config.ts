// The Nomos web UI build: Svelte 5 + TypeScript, deterministic output for `web/dist`.
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  plugins: [svelte()],
  base: '/',
  // `npm run dev` forwards the API and event streams to a running server.
  server: {
    proxy: { '/api': { target: process.env.NOMOS_SERVER ?? 'http://127.0.0.1:8092' } },
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  build: {
    outDir: process.env.NOMOS_WEB_OUT ?? 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // One stylesheet and one script; names carry a content hash, which is stable across
    // identical builds, so a rebuild of the same sources gives the same bytes.
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts'],
  },
});
