// Runs the server as a separate process (`tsx server/src/main.ts`), as `npm start` does, so tests
// can kill it for real. Spawned detached from node_modules/.bin and killed by process group.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const root = new URL("../..", import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** What it has written to stdout and stderr so far (its pino log lines). */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(join(root, "node_modules/.bin/tsx"), [join(root, "server/src/main.ts")], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a half-started server behind.
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
      reject(new Error(`server did not start:\n${output}`));
    }, 30_000);
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /"port":(\d+).*listening/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      const port = Number(m[1]);
      resolve({
        child,
        port,
        url: `http://127.0.0.1:${port}/graphql`,
        output: () => output,
        kill: (signal = "SIGKILL") =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("exit", () => done());
            process.kill(-child.pid!, signal);
          }),
      });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  });
}
