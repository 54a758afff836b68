/**
 * Where a user's avatar is served; the version (a prefix of the image's
 * SHA-256) changes with the image, so caches refresh.
 */
export function avatarUrlOf(
  publicUrl: string,
  handle: string,
  avatarSha256: string | null | undefined,
): string {
  const base = `${publicUrl}/api/users/${handle}/avatar`;
  return avatarSha256 ? `${base}?v=${avatarSha256.slice(0, 16)}` : base;
}
