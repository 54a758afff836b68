import { describe, expect, it } from "vitest";
import { parseCommitObject } from "./commit-object.js";

const HEAD = [
  "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  "parent 8ee34c5f0d9a9d5b7d0f2f4f5c9d2d7f0c4b1a2e",
  "author A U Thor <Author@Example.com> 1700000000 +0100",
  "committer C O Mitter <committer@example.com> 1700000000 +0100",
];
const MERGETAG = [
  "mergetag object 8ee34c5f0d9a9d5b7d0f2f4f5c9d2d7f0c4b1a2e",
  " type commit",
  " ",
  " gpgsig lookalike",
];
const BODY = "\nsigned\n gpgsig in the message\n";

describe("raw commit objects", () => {
  it("takes the gpgsig header as the signature and leaves every gpgsig header out of the payload", () => {
    const raw = [
      ...HEAD,
      "gpgsig -----BEGIN SSH SIGNATURE-----",
      " AAAA",
      " -----END SSH SIGNATURE-----",
      "gpgsig-sha256 -----BEGIN SSH SIGNATURE-----",
      " BBBB",
      " -----END SSH SIGNATURE-----",
      ...MERGETAG,
      BODY,
    ].join("\n");
    expect(parseCommitObject(Buffer.from(raw))).toEqual({
      authorEmail: "Author@Example.com",
      signature: "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n",
      payload: Buffer.from([...HEAD, ...MERGETAG, BODY].join("\n")),
    });
  });

  it("reads a commit without a gpgsig header as unsigned, even with a gpgsig-sha256 one", () => {
    const raw = Buffer.from(
      [...HEAD, "gpgsig-sha256 -----BEGIN PGP SIGNATURE-----", " CCCC", BODY].join("\n"),
    );
    const parsed = parseCommitObject(raw);
    expect(parsed.signature).toBeNull();
    expect(parsed.payload.toString()).toBe([...HEAD, BODY].join("\n"));
  });
});
