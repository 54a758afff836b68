import http from "node:http";
import type { Socket } from "node:net";

/** A request the proxy passed on. */
export interface ProxiedRequest {
  method: string;
  url: string;
  range: string | undefined;
}

/**
 * A pass-through HTTP proxy in front of a real hub, standing in for a network
 * that breaks: a rule can cut a response after some bytes, or drop a request
 * before it reaches the hub. It never answers anything itself.
 */
export class CuttingProxy {
  readonly requests: ProxiedRequest[] = [];
  /** Where requests go: the hub's own listener. */
  target = "";
  /** Cut the response of the first matching request after this many body bytes, then forget the rule. */
  cutResponse: { match: (request: ProxiedRequest) => boolean; afterBytes: number } | undefined;
  /** Break the connection of the first matching request before forwarding it, then forget the rule. */
  dropRequest: ((request: ProxiedRequest) => boolean) | undefined;
  /** Hold matching responses after this many bytes until `release()`. */
  stall: { match: (request: ProxiedRequest) => boolean; afterBytes: number } | undefined;
  private readonly waiting: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();
  private server: http.Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.forward(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
    return this;
  }

  release(): void {
    this.stall = undefined;
    for (const resume of this.waiting.splice(0)) resume();
  }

  async stop(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const seen: ProxiedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      range: req.headers.range,
    };
    this.requests.push(seen);
    if (this.dropRequest?.(seen)) {
      this.dropRequest = undefined;
      req.socket.destroy();
      return;
    }
    const target = new URL(seen.url, this.target);
    const upstream = http.request(
      target,
      { method: seen.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const cut = this.cutResponse?.match(seen) ? this.cutResponse : undefined;
        if (cut) this.cutResponse = undefined;
        const stall = this.stall?.match(seen) ? this.stall : undefined;
        let sent = 0;
        let limited = cut ?? stall;
        answer.on("data", (chunk: Buffer) => {
          if (limited && sent + chunk.length >= limited.afterBytes) {
            const head = chunk.subarray(0, limited.afterBytes - sent);
            const rest = chunk.subarray(head.length);
            sent += head.length;
            limited = undefined;
            if (cut) {
              answer.destroy();
              res.write(head, () => res.socket?.destroy());
              return;
            }
            res.write(head);
            answer.pause();
            this.waiting.push(() => {
              sent += rest.length;
              res.write(rest);
              answer.resume();
            });
            return;
          }
          sent += chunk.length;
          if (!res.write(chunk)) {
            answer.pause();
            res.once("drain", () => answer.resume());
          }
        });
        answer.on("end", () => res.end());
        answer.on("error", () => res.destroy());
      },
    );
    upstream.on("error", () => res.destroy());
    // A client that went away takes its upstream request with it, so the hub can finish.
    res.once("close", () => upstream.destroy());
    req.pipe(upstream);
  }
}
