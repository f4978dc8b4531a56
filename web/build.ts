// Keeps web/dist in step with the sources: `npm start` runs this first (prestart), so a fresh
// clone serves the dashboard and an edited one never serves a stale build. Builds only when
// web/dist is missing or older than a source file (~3 s); prints the bundle's gzip size.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const web = fileURLToPath(new URL(".", import.meta.url));
const root = join(web, "..");
const dist = join(web, "dist");
/** What the build reads besides web/src. */
const INPUTS = [join(web, "index.html"), join(web, "vite.config.ts"), join(root, "package-lock.json")];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const newest = (paths: string[]) => Math.max(0, ...paths.filter(existsSync).map((p) => statSync(p).mtimeMs));

/** Why web/dist must be rebuilt, or null when it is current. */
export function staleReason(): string | null {
  const index = join(dist, "index.html");
  if (!existsSync(index)) return "web/dist is missing";
  return newest([...files(join(web, "src")), ...INPUTS]) > statSync(index).mtimeMs ? "web/src changed since the last build" : null;
}

export function build(): void {
  // Typed operations come from codegen (postinstall); make sure they exist before bundling.
  if (!existsSync(join(web, "src/gql/graphql.ts"))) run("graphql-codegen", ["--config", "codegen.ts"]);
  run("vite", ["build", "--config", "web/vite.config.ts", "--logLevel", "warn"]);
}

function run(bin: string, args: string[]) {
  // NODE_ENV=test (vitest) would make Vite bundle React's development build.
  const env = { ...process.env, NODE_ENV: "production" };
  const r = spawnSync(join(root, "node_modules/.bin", bin), args, { cwd: root, stdio: "inherit", env });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(" ")} failed (exit ${r.status})`);
}

/** Bytes of the built JavaScript and CSS, raw and gzipped (what a browser downloads). */
export function bundleSize(): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const f of files(join(dist, "assets")).filter((f) => /\.(js|css)$/.test(f))) {
    const bytes = readFileSync(f);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

/** Held while building: two browser test files (parallel processes) may both find web/dist stale. */
const LOCK = join(web, ".build-lock");
/** Longer than any build: a lock this old was left by a killed one. */
const LOCK_STALE_MS = 180_000;

function withBuildLock(fn: () => void): void {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else Atomics.wait(nap, 0, 0, 200); // a synchronous sleep: the build itself is synchronous
    }
  }
  try {
    fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

export function ensureBuild(log = console.log): void {
  withBuildLock(() => {
    // Checked under the lock: a build that finished while we waited made it current.
    const why = staleReason();
    if (why) {
      log(`[web] building the dashboard: ${why}`);
      build();
    }
  });
  const { raw, gzip } = bundleSize();
  log(`[web] dashboard bundle: ${(raw / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzip`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    ensureBuild();
  } catch (e) {
    // The server still starts (it serves a notice page); say why the dashboard is missing.
    console.error(`[web] dashboard build failed: ${(e as Error).message}`);
  }
}
