// `appsdk build` (and `appsdk dev`, on every save) builds dist/index.html: one self-contained file with
// every script and style inlined, which is what the server hands ChatGPT as the ui:// resource.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

export default defineConfig({
  plugins: [react(), viteSingleFile({ removeViteModuleLoader: true })],
  build: { outDir: "dist", emptyOutDir: true, reportCompressedSize: false },
});
