import { S3Client } from "@aws-sdk/client-s3";
import type { Config, ObjectStoreConfig } from "../../config.js";
import { createLocalObjectStore } from "./local-object-store.js";
import { createMultipartStaging, type MultipartStaging } from "./multipart-staging.js";
import type { ObjectStore } from "./object-store.js";
import { createS3MultipartStaging } from "./s3-multipart-staging.js";
import { createS3ObjectStore } from "./s3-object-store.js";

type S3Config = Extract<ObjectStoreConfig, { kind: "s3" }>;

/**
 * An S3 client for the configured service; `endpoint` overrides the configured one (the address presigned
 * URLs name). Without credentials in the configuration the SDK finds them as it always does (profiles,
 * web identity, the instance's role).
 */
export function createS3Client(config: S3Config, endpoint = config.endpoint): S3Client {
  return new S3Client({
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(endpoint ? { endpoint } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
  });
}

/** The one object store of a hub, as configured (`HUB_OBJECT_STORE`, docs/storage.md); every surface and command shares it. */
export function createObjectStore(config: Pick<Config, "dataDir" | "objectStore">): ObjectStore {
  const settings = config.objectStore;
  if (settings.kind === "local")
    return createLocalObjectStore(config.dataDir, { accelRedirect: settings.accelRedirect ?? null });
  return createS3ObjectStore({
    client: createS3Client(settings),
    ...(settings.publicEndpoint ? { presignClient: createS3Client(settings, settings.publicEndpoint) } : {}),
    bucket: settings.bucket,
    prefix: settings.prefix,
    presignedDownloads: settings.presignedDownloads,
  });
}

/**
 * Where the parts of unfinished multipart LFS uploads wait: the data dir with the local store, the bucket with
 * an S3-compatible one, so any process of a deployment can take the next part or complete the upload.
 */
export function createMultipartStagingFor(config: Pick<Config, "dataDir" | "objectStore">): MultipartStaging {
  const settings = config.objectStore;
  if (settings.kind === "local") return createMultipartStaging(config.dataDir);
  return createS3MultipartStaging({
    client: createS3Client(settings),
    bucket: settings.bucket,
    prefix: settings.prefix,
  });
}
