import { defineConfig } from "vitest/config";

// Two pages: the main window and the quick-note box. Tauri serves dist/.
export default defineConfig({
  clearScreen: false,
  build: {
    target: "safari15",
    outDir: "dist",
    emptyOutDir: true,
    rollupOptions: {
      input: {
        main: new URL("./index.html", import.meta.url).pathname,
        quick: new URL("./quick.html", import.meta.url).pathname,
      },
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
  },
});
