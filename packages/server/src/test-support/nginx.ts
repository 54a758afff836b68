import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const DEPLOYMENT_DOC = fileURLToPath(new URL("../../../../docs/deployment.md", import.meta.url));
const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((file) => existsSync(file)) ?? "nginx";

/** The first nginx block of docs/deployment.md whose text matches `marker`, as the page shows it. */
export function documentedNginxBlock(marker: RegExp): string {
  const blocks = [...readFileSync(DEPLOYMENT_DOC, "utf8").matchAll(/```nginx\n([\s\S]*?)```/g)];
  const block = blocks.map((match) => match[1] ?? "").find((text) => marker.test(text));
  if (!block) throw new Error(`docs/deployment.md has no nginx block matching ${String(marker)}`);
  return block;
}

/** A listener that keeps `port` taken until it is closed. */
export function holdPort(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface TestNginx {
  /** What nginx wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs Debian's nginx in the foreground under `work/nginx/` with `site` included in its `http` block, once the
 * `held` listeners (keeping its ports from other tests' processes) are closed; resolves once `port` answers.
 */
export async function startNginx(
  work: string,
  site: string,
  { port, held }: { port: number; held: net.Server[] },
): Promise<TestNginx> {
  const prefix = path.join(work, "nginx");
  for (const sub of ["logs", "body", "proxy", "fastcgi", "uwsgi", "scgi"])
    mkdirSync(path.join(prefix, sub), { recursive: true });
  writeFileSync(path.join(prefix, "hub.conf"), site);
  writeFileSync(
    path.join(prefix, "nginx.conf"),
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  include ${prefix}/hub.conf;
}
`,
  );
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  let log = "";
  const child: ChildProcess = spawn(
    NGINX,
    ["-p", `${prefix}/`, "-c", path.join(prefix, "nginx.conf"), "-g", "daemon off;"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGQUIT");
    await exited;
  };
  for (let attempt = 0; !(await canConnect(port)); attempt++) {
    if (child.exitCode !== null || attempt > 100) {
      await stop();
      throw new Error(`nginx did not start:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { output: () => log, stop };
}
