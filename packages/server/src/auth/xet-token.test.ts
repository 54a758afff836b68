import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mintXetToken, verifyXetToken, type XetGrant } from "./xet-token.js";

describe("Xet tokens", () => {
  const key = randomBytes(32);
  const grant: XetGrant = { credential: "token:t1", repositoryId: "r1", access: "write", expires: 2_000 };

  it("carry their grant until they expire, and not a second longer", () => {
    const token = mintXetToken(key, grant);
    expect(token.startsWith("hubxet1.")).toBe(true);
    expect(verifyXetToken(key, token, 1_000)).toEqual(grant);
    expect(verifyXetToken(key, token, 2_000)).toEqual(grant);
    expect(verifyXetToken(key, token, 2_001)).toBeNull();
  });

  it("refuse another key, a changed payload, a changed signature and anything else", () => {
    const token = mintXetToken(key, grant);
    const [, payload = "", signature = ""] = token.split(".");
    const widened = Buffer.from(
      JSON.stringify({ c: "token:t1", r: "r1", a: "write", e: 9_999_999_999 }),
    ).toString("base64url");
    expect(verifyXetToken(randomBytes(32), token, 1_000)).toBeNull();
    expect(verifyXetToken(key, `hubxet1.${widened}.${signature}`, 1_000)).toBeNull();
    expect(verifyXetToken(key, `hubxet1.${payload}.${signature.slice(0, -2)}AA`, 1_000)).toBeNull();
    expect(verifyXetToken(key, `${token}.extra`, 1_000)).toBeNull();
    for (const other of ["", "hf_abc", "hubssh1.x.y", "hubxet1."])
      expect(verifyXetToken(key, other, 0)).toBeNull();
  });

  it("know the read, write and pull-request accesses only", () => {
    for (const access of ["read", "write", "pull-request"] as const) {
      expect(verifyXetToken(key, mintXetToken(key, { ...grant, access }), 0)?.access).toBe(access);
    }
    const admin = mintXetToken(key, { ...grant, access: "admin" as never });
    expect(verifyXetToken(key, admin, 0)).toBeNull();
  });
});
