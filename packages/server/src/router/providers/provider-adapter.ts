import { EventEmitter } from "node:events";
import type { Readable } from "node:stream";
import type { Task } from "../providers-file.js";

/** Tokens a response consumed, as the provider reported them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * Cancels the provider calls of a request whose client went away. undici
 * takes an EventEmitter as a request's signal; an AbortController per request
 * cost the Router about a tenth of its time.
 */
export class Cancellation extends EventEmitter<{ abort: [] }> {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
}

/** One task request to one provider. */
export interface UpstreamRequest {
  task: Task;
  providerModel: string;
  /** The caller's JSON body; the adapter writes its own `model` into what it sends. */
  body: Record<string, unknown>;
  stream: boolean;
  apiKey: string;
  signal: Cancellation;
  /** How long to wait for the response headers. */
  headersTimeoutMs: number;
  /** The longest silence allowed between body bytes, the first byte included. */
  bodyTimeoutMs: number;
}

/** A provider's answer once its headers have arrived; the body is read (or relayed) by the Router. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** Watches a relayed stream go by, untouched, and keeps the usage it reports. */
export interface UsageTap {
  push(chunk: Buffer): void;
  usage(): Usage | null;
}

/**
 * What the Router needs from a provider: send a task request, and read the
 * usage from a whole body or from a stream. Providers speaking the OpenAI wire
 * format share one implementation; a provider with another format gets its own
 * adapter behind this interface.
 */
export interface ProviderAdapter {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  /** The usage a non-streaming answer reports, from its JSON document (parsed once by the Router). */
  usageOf(document: unknown): Usage | null;
  usageTap(): UsageTap;
  close(): Promise<void>;
}
