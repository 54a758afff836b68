import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import type { Dialect } from "./databases.js";
import { freePorts } from "./hub-process.js";

/** The MinIO the tests run, built by `.ci/run` (`go install github.com/minio/minio@<pinned version>`). */
const MINIO_BINARY = process.env.HUB_TEST_MINIO ?? path.join(os.homedir(), "go", "bin", "minio");

/** The object stores every LFS and file-API suite runs on. */
export const STORE_KINDS = ["local", "s3"] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** A MinIO server on a free loopback port with its own data dir and credentials, stopped by `stop()`. */
export interface TestMinio {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client with the server's credentials, for tests that look into the bucket themselves. */
  client: S3Client;
  /** Makes a new, empty bucket and answers its name. */
  createBucket(): Promise<string>;
  /** The hub's settings for a store in `bucket` under `prefix` (`HUB_OBJECT_STORE` and the rest). */
  env(bucket: string, prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

async function waitUntilLive(endpoint: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`MinIO exited with ${child.exitCode}:\n${log()}`);
    const live = await fetch(`${endpoint}/minio/health/live`).then(
      (response) => response.ok,
      () => false,
    );
    if (live) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`MinIO did not come up at ${endpoint}:\n${log()}`);
}

/**
 * Starts MinIO. A machine without it fails the suite rather than skipping it: the S3 store is only tested
 * against a real server.
 */
export async function startMinio(): Promise<TestMinio> {
  if (!existsSync(MINIO_BINARY)) {
    throw new Error(
      `MinIO is not at ${MINIO_BINARY}: run .ci/run once (it builds the pinned version with go install), or set HUB_TEST_MINIO.`,
    );
  }
  const [port] = await freePorts(1);
  const endpoint = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-minio-"));
  const accessKeyId = `hub${randomBytes(6).toString("hex")}`;
  const secretAccessKey = randomBytes(18).toString("hex");
  const child = spawn(MINIO_BINARY, ["server", "--address", `127.0.0.1:${port}`, "--quiet", dataDir], {
    env: {
      PATH: process.env.PATH,
      HOME: dataDir,
      MINIO_ROOT_USER: accessKeyId,
      MINIO_ROOT_PASSWORD: secretAccessKey,
      MINIO_BROWSER: "off",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitUntilLive(endpoint, child, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  const client = new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    client,
    async createBucket() {
      const bucket = `hub-test-${randomBytes(6).toString("hex")}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return bucket;
    },
    env: (bucket, prefix = "hub") => ({
      HUB_OBJECT_STORE: `s3://${bucket}/${prefix}`,
      HUB_S3_ENDPOINT: endpoint,
      HUB_S3_REGION: "us-east-1",
      HUB_S3_FORCE_PATH_STYLE: "1",
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
    }),
    async stop() {
      client.destroy();
      await stop();
    },
  };
}

/**
 * The hub settings for a suite on `kind`: nothing for the local store (the default), or a fresh bucket on
 * a MinIO started for the suite. `stop()` stops that MinIO.
 */
export async function storeFor(
  kind: StoreKind,
): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  if (kind === "local") return { env: {}, stop: async () => {} };
  const minio = await startMinio();
  return { env: minio.env(await minio.createBucket()), stop: () => minio.stop() };
}

/**
 * The runs of every LFS and file-API suite: both dialects on the local store, and PostgreSQL (what a
 * deployment on S3 runs) on MinIO. The store does not depend on the dialect, so one run covers it.
 */
export const STORE_SUITES = [
  { dialect: "sqlite", store: "local" },
  { dialect: "postgres", store: "local" },
  { dialect: "postgres", store: "s3" },
] as const satisfies ReadonlyArray<{ dialect: Dialect; store: StoreKind }>;
