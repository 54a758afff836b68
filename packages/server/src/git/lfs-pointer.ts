/** The text of a Git LFS pointer file (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md). */
export function lfsPointer(oid: string, size: number): string {
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`;
}

const POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n$/;

/** Pointer files are small; anything larger is a regular file. */
export const MAX_POINTER_SIZE = 200;

/** The object a blob points to, when the blob is an LFS pointer. */
export function parseLfsPointer(content: Buffer | string): { oid: string; size: number } | null {
  const match = POINTER.exec(content.toString());
  return match?.[1] && match[2] ? { oid: match[1], size: Number(match[2]) } : null;
}
