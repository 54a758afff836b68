import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedDelivery {
  id: string;
  timestamp: number;
  signature: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  payload: Record<string, unknown>;
  /** Whether the signature verified with the secret given to `verifyWith`, by the Standard Webhooks library. */
  verified: boolean;
  status: number;
}

/** What the receiver answers a delivery: a status (and body), or silence until the hub gives up. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

/**
 * A webhook receiver on loopback, as an integrator would run one: it records
 * every request, verifies signatures with the `standardwebhooks` library, and
 * answers as the test tells it (by default 204).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  url = "";
  private secrets: string[] = [];
  private answer: (delivery: ReceivedDelivery) => Answer = () => ({ status: 204 });
  private waiters: { count: number; resolve: () => void }[] = [];
  private readonly server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const header = (name: string) => String(request.headers[name] ?? "");
      const delivery: ReceivedDelivery = {
        id: header("webhook-id"),
        timestamp: Number(header("webhook-timestamp")),
        signature: header("webhook-signature"),
        headers: request.headers,
        body,
        payload: JSON.parse(body) as Record<string, unknown>,
        verified: this.secrets.some((secret) => {
          try {
            new Webhook(secret).verify(body, {
              "webhook-id": header("webhook-id"),
              "webhook-timestamp": header("webhook-timestamp"),
              "webhook-signature": header("webhook-signature"),
            });
            return true;
          } catch {
            return false;
          }
        }),
        status: 0,
      };
      const answer = this.answer(delivery);
      if (answer === "hang") {
        delivery.status = -1;
        this.record(delivery);
        return;
      }
      delivery.status = answer.status;
      this.record(delivery);
      response.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      response.end(answer.body ?? "");
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Signatures are checked against these secrets (a route's, as its create response showed it). */
  verifyWith(...secrets: string[]): void {
    this.secrets = secrets;
  }

  answerWith(answer: (delivery: ReceivedDelivery) => Answer): void {
    this.answer = answer;
  }

  /** Resolves once `count` requests in all have arrived, or fails after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 20_000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`expected ${count} deliveries within ${timeoutMs} ms, got ${this.received.length}`),
          ),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  private record(delivery: ReceivedDelivery): void {
    this.received.push(delivery);
    this.waiters = this.waiters.filter((waiter) => {
      if (this.received.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
