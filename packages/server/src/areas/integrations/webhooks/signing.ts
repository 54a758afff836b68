import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";

/** A new signing secret in the Standard Webhooks form: `whsec_` and a base64 key of 32 random bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/**
 * The headers that let a receiver check a delivery, as the Standard Webhooks
 * specification defines them (https://www.standardwebhooks.com), so its
 * libraries verify our deliveries unchanged: an HMAC-SHA256, keyed with the
 * secret, over `id.timestamp.body`. The timestamp lets receivers refuse
 * replays of old deliveries; the id stays the same on every retry.
 */
export function signatureHeaders(
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const signature = createHmac("sha256", key)
    .update(`${deliveryId}.${timestampSeconds}.${body}`)
    .digest("base64");
  return {
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${signature}`,
  };
}
