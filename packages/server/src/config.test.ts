import { describe, expect, it } from "vitest";
import { ConfigError, objectStoreConfig } from "./config.js";

describe("the object store's settings", () => {
  it("keeps objects in the data dir unless HUB_OBJECT_STORE names a bucket", () => {
    expect(objectStoreConfig({})).toEqual({ kind: "local", accelRedirect: null });
    expect(objectStoreConfig({ HUB_OBJECT_STORE: "local" })).toEqual({ kind: "local", accelRedirect: null });
  });

  it("names nginx's internal location for the local store's files, and refuses one that is no URI prefix", () => {
    expect(objectStoreConfig({ HUB_ACCEL_REDIRECT: "/_hub_lfs/" })).toEqual({
      kind: "local",
      accelRedirect: "/_hub_lfs/",
    });
    expect(objectStoreConfig({ HUB_ACCEL_REDIRECT: "/internal/hub-lfs/" })).toMatchObject({
      accelRedirect: "/internal/hub-lfs/",
    });
    for (const bad of ["_hub_lfs/", "/_hub_lfs", "/", "/a/../b/", "/a b/", "/a?x=1/", "http://nginx/x/"]) {
      expect(() => objectStoreConfig({ HUB_ACCEL_REDIRECT: bad }), bad).toThrow(/^HUB_ACCEL_REDIRECT must/);
    }
    // With a bucket, downloads already bypass the hub: the two settings together are a mistake to say.
    expect(() =>
      objectStoreConfig({ HUB_OBJECT_STORE: "s3://bucket", HUB_ACCEL_REDIRECT: "/_hub_lfs/" }),
    ).toThrow(/^HUB_ACCEL_REDIRECT applies to the local object store/);
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
