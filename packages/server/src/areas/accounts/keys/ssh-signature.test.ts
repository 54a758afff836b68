import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSshSignature, verifySshSignature } from "./ssh-signature.js";

describe("SSH signatures", () => {
  let work: string;
  const payload = Buffer.from("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nsigned\n");
  /** A fresh key of the type and what `ssh-keygen -Y sign` makes of the payload with it. */
  const sign = (type: string, bits: number | undefined, namespace = "git", data = payload) => {
    const key = path.join(work, `${type}-${bits ?? 0}-${namespace}`);
    execFileSync("ssh-keygen", [
      "-q",
      "-t",
      type,
      ...(bits ? ["-b", String(bits)] : []),
      "-N",
      "",
      "-f",
      key,
    ]);
    const file = path.join(work, `${type}-${bits ?? 0}-${namespace}.txt`);
    writeFileSync(file, data);
    execFileSync("ssh-keygen", ["-q", "-Y", "sign", "-n", namespace, "-f", key, file]);
    return {
      signature: readFileSync(`${file}.sig`, "utf8"),
      fingerprint: execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", `${key}.pub`])
        .toString()
        .split(" ")[1],
    };
  };

  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "hub-sshsig-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each([
    ["ed25519", undefined],
    ["ecdsa", 256],
    ["ecdsa", 384],
    ["ecdsa", 521],
    ["rsa", 2048],
  ] as const)(
    "verifies what ssh-keygen signs with %s %s and names the signer's fingerprint",
    (type, bits) => {
      const { signature, fingerprint } = sign(type, bits);
      const read = readSshSignature(signature);
      expect(read?.fingerprint).toBe(fingerprint);
      expect(read && verifySshSignature(read, payload)).toBe("valid");
      expect(read && verifySshSignature(read, Buffer.concat([payload, Buffer.from("x")]))).toBe("invalid");
    },
  );

  it("refuses a signature made for another namespace", () => {
    const read = readSshSignature(sign("ed25519", undefined, "file").signature);
    expect(read && verifySshSignature(read, payload)).toBe("invalid");
  });

  it("reads nothing from text that is not an SSH signature", () => {
    expect(readSshSignature("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n")).toBeNull();
    expect(
      readSshSignature("-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n"),
    ).toBeNull();
  });
});
