// esbuild bundles a webview's CSS when its script imports it (loader 'css' in scripts/build.mjs).
declare module '*.css';
