import { ListObjectsV2Command, type _Object, type S3Client } from "@aws-sdk/client-s3";

/** The HTTP status of an SDK error, if it came from the service. */
export function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/**
 * Every object of `bucket` whose key starts with `prefix`, page by page as they are read. A page that does not
 * move the continuation token on ends the listing rather than repeating it forever.
 */
export async function* listObjects(client: S3Client, bucket: string, prefix: string): AsyncIterable<_Object> {
  let token: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    yield* page.Contents ?? [];
    const next = page.IsTruncated ? page.NextContinuationToken : undefined;
    if (!next || next === token) return;
    token = next;
  }
}
