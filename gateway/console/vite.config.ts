import { defineConfig } from "vitest/config";
import preact from "@preact/preset-vite";

// The console is served by the gateway under /console/ and embedded from
// dist. Assets carry their content's hash (the gateway caches them for a
// year); no inline script or style, so the strict CSP holds.
export default defineConfig({
  base: "/console/",
  plugins: [preact()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: "es2022",
    sourcemap: false,
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
