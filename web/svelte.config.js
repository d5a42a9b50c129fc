// Svelte compiler settings shared by the build, svelte-check and vitest.
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess(),
};
