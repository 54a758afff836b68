/** What signature verification needs of a raw commit object. */
export interface SignedCommit {
  /** The email of the `author` header. */
  authorEmail: string;
  /** The armored signature of the `gpgsig` header, or null when the commit is unsigned. */
  signature: string | null;
  /** The bytes the signature covers: the object without its signature headers. */
  payload: Buffer;
}

const NEWLINE = 0x0a;
const SPACE = 0x20;

/**
 * Splits a raw commit object (as `git cat-file commit` prints it) the way git's
 * `parse_buffer_signed_by_header` does for a SHA-1 repository: the `gpgsig`
 * header and its continuation lines are the signature, and every `gpgsig*`
 * header (such as `gpgsig-sha256`, which signs the object's SHA-256 form) is
 * left out of the payload. https://git-scm.com/docs/signature-format
 */
export function parseCommitObject(raw: Buffer): SignedCommit {
  const payload: Buffer[] = [];
  const signature: string[] = [];
  let authorEmail = "";
  let inSignature = false;
  let otherSignature = false;
  let offset = 0;
  while (offset < raw.length) {
    const newline = raw.indexOf(NEWLINE, offset);
    const end = newline === -1 ? raw.length : newline + 1;
    const line = raw.subarray(offset, end);
    if (line[0] === NEWLINE) {
      payload.push(raw.subarray(offset));
      break;
    }
    const header = line.toString("utf8");
    if (inSignature && line[0] === SPACE) {
      signature.push(header.slice(1));
    } else if (header.startsWith("gpgsig ")) {
      signature.push(header.slice("gpgsig ".length));
      inSignature = true;
      otherSignature = false;
    } else {
      inSignature = false;
      if (header.startsWith("gpgsig")) otherSignature = true;
      else if (otherSignature && line[0] !== SPACE) otherSignature = false;
      if (!otherSignature) payload.push(line);
      if (header.startsWith("author ") && !authorEmail) authorEmail = identityEmail(header);
    }
    offset = end;
  }
  return {
    authorEmail,
    signature: signature.length > 0 ? signature.join("") : null,
    payload: Buffer.concat(payload),
  };
}

/** The address between the angle brackets of a `Name <email> time zone` identity. */
function identityEmail(header: string): string {
  const open = header.indexOf("<");
  const close = header.indexOf(">", open + 1);
  return open === -1 || close === -1 ? "" : header.slice(open + 1, close);
}
