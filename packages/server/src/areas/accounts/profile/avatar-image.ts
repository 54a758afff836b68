/** The image formats an avatar may be, by media type. */
export const AVATAR_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export type AvatarType = (typeof AVATAR_TYPES)[number];

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const startsWith = (data: Buffer, prefix: Buffer | string, at = 0) => {
  const bytes = typeof prefix === "string" ? Buffer.from(prefix, "latin1") : prefix;
  return data.length >= at + bytes.length && data.subarray(at, at + bytes.length).equals(bytes);
};

/**
 * The real type of an image by its leading bytes (its "magic number"), never
 * by what the client declared: PNG's signature and IHDR chunk, JPEG's SOI
 * marker followed by another marker, GIF87a/GIF89a, and a RIFF container of
 * type WEBP whose declared size matches the data. Null for anything else.
 */
export function sniffImage(data: Buffer): AvatarType | null {
  if (startsWith(data, PNG) && startsWith(data, "IHDR", 12)) return "image/png";
  if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "image/jpeg";
  if ((startsWith(data, "GIF87a") || startsWith(data, "GIF89a")) && data.length >= 13) return "image/gif";
  if (
    startsWith(data, "RIFF") &&
    startsWith(data, "WEBP", 8) &&
    data.length >= 16 &&
    data.readUInt32LE(4) + 8 === data.length
  ) {
    return "image/webp";
  }
  return null;
}
