// The dashboard's build (`npm run build:web` → web/dist, served by the server at /) and dev server
// (`npm run dev:web`, proxying /graphql — HTTP and WebSocket — to a running `npm run dev`).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const api = process.env.CRAWL_API_ORIGIN ?? "http://127.0.0.1:4000";
const proxy = { "/graphql": { target: api, ws: true, changeOrigin: true } };

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 400 },
  server: { proxy },
  preview: { proxy },
});
