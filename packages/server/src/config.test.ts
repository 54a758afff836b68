import { describe, expect, it } from "vitest";
import { ConfigError, objectStoreConfig } from "./config.js";

describe("the object store's settings", () => {
  it("keeps objects in the data dir unless HUB_OBJECT_STORE names a bucket", () => {
    expect(objectStoreConfig({})).toEqual({ kind: "local" });
    expect(objectStoreConfig({ HUB_OBJECT_STORE: "local" })).toEqual({ kind: "local" });
  });

  it("reads a bucket, a prefix, the endpoint, path style and credentials", () => {
    expect(
      objectStoreConfig({
        HUB_OBJECT_STORE: "s3://hub-objects/deep/prefix/",
        HUB_S3_ENDPOINT: "http://127.0.0.1:9000/",
        HUB_S3_FORCE_PATH_STYLE: "true",
        AWS_ACCESS_KEY_ID: "id",
        AWS_SECRET_ACCESS_KEY: "secret",
      }),
    ).toEqual({
      kind: "s3",
      bucket: "hub-objects",
      prefix: "deep/prefix/",
      endpoint: "http://127.0.0.1:9000",
      publicEndpoint: null,
      region: "us-east-1",
      forcePathStyle: true,
      presignedDownloads: true,
      credentials: { accessKeyId: "id", secretAccessKey: "secret" },
    });
    // Without credentials in the environment the SDK looks for them itself; AWS_REGION is its region too.
    expect(
      objectStoreConfig({
        HUB_OBJECT_STORE: "s3://bucket",
        AWS_REGION: "eu-west-3",
        HUB_S3_PRESIGNED_DOWNLOADS: "0",
      }),
    ).toMatchObject({
      prefix: "",
      endpoint: null,
      region: "eu-west-3",
      presignedDownloads: false,
      credentials: null,
    });
  });

  it.each([
    ["HUB_OBJECT_STORE", "minio://bucket"],
    ["HUB_OBJECT_STORE", "s3://Bucket"],
    ["HUB_OBJECT_STORE", "s3://b"],
    ["HUB_OBJECT_STORE", "s3://bucket//prefix"],
    ["HUB_S3_ENDPOINT", "127.0.0.1:9000"],
    ["HUB_S3_FORCE_PATH_STYLE", "maybe"],
  ])("refuses %s=%s, naming the setting", (name, value) => {
    expect(() => objectStoreConfig({ HUB_OBJECT_STORE: "s3://bucket", [name]: value })).toThrow(
      new RegExp(`^${name} must`),
    );
    expect(() => objectStoreConfig({ HUB_OBJECT_STORE: "s3://bucket", [name]: value })).toThrow(ConfigError);
  });
});
