import { describe, expect, it } from "vitest";
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  hotp,
  matchTotp,
  otpauthUri,
  totp,
  totpStep,
} from "./totp.js";

/** The shared secret of RFC 4226 Appendix D and of RFC 6238 Appendix B's SHA-1 rows. */
const RFC_KEY = Buffer.from("12345678901234567890", "ascii");

describe("HOTP and TOTP", () => {
  it("give RFC 4226 Appendix D's values for counters 0 to 9", () => {
    const expected = [
      "755224",
      "287082",
      "359152",
      "969429",
      "338314",
      "254676",
      "287922",
      "162583",
      "399871",
      "520489",
    ];
    expect(expected.map((_, counter) => hotp(RFC_KEY, counter))).toEqual(expected);
  });

  it("give RFC 6238 Appendix B's SHA-1 values (8 digits, 30-second steps)", () => {
    const vectors: Array<[number, string]> = [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"],
    ];
    for (const [seconds, code] of vectors)
      expect(totp(RFC_KEY, seconds * 1000, 8), String(seconds)).toBe(code);
    // The 6-digit code an app shows is the low six digits of the same truncation.
    expect(totp(RFC_KEY, 59_000)).toBe("287082");
  });

  it("encode and decode base32 as RFC 4648 §10 does, without padding", () => {
    const vectors: Array<[string, string]> = [
      ["", ""],
      ["f", "MY"],
      ["fo", "MZXQ"],
      ["foo", "MZXW6"],
      ["foob", "MZXW6YQ"],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI"],
    ];
    for (const [plain, encoded] of vectors) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded);
      expect(base32Decode(encoded).toString()).toBe(plain);
    }
    expect(base32Encode(RFC_KEY)).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    expect(base32Decode("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").equals(RFC_KEY)).toBe(true);
    expect(base32Decode("MZXW6YTBOI======").toString()).toBe("foobar");
    expect(() => base32Decode("MZ1W")).toThrow(/base32/);
  });

  it("make 20-byte secrets, different every time", () => {
    const secret = generateTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(secret)).toHaveLength(20);
    expect(generateTotpSecret()).not.toBe(secret);
  });
});

describe("matching a code", () => {
  const secret = base32Encode(RFC_KEY);
  const now = 1111111111_000;
  const step = totpStep(now);
  const codeAt = (offset: number) => hotp(RFC_KEY, step + offset);

  it("accepts the current step and one step either side, and nothing further", () => {
    expect(matchTotp(secret, codeAt(0), now, null)).toEqual({ step });
    expect(matchTotp(secret, codeAt(-1), now, null)).toEqual({ step: step - 1 });
    expect(matchTotp(secret, codeAt(1), now, null)).toEqual({ step: step + 1 });
    expect(matchTotp(secret, codeAt(-2), now, null)).toBe("wrong");
    expect(matchTotp(secret, codeAt(2), now, null)).toBe("wrong");
  });

  it("refuses a step at or before the last one used, and anything not six digits", () => {
    expect(matchTotp(secret, codeAt(0), now, step)).toBe("reused");
    expect(matchTotp(secret, codeAt(-1), now, step)).toBe("reused");
    expect(matchTotp(secret, codeAt(1), now, step)).toEqual({ step: step + 1 });
    for (const bad of ["", "12345", "1234567", "abcdef", ` ${codeAt(0).slice(1)}`]) {
      expect(matchTotp(secret, bad, now, null), bad).toBe("wrong");
    }
  });

  it("builds the key URI authenticator apps scan", () => {
    const uri = new URL(otpauthUri({ secret, issuer: "hub.example.com", account: "alice" }));
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe("/hub.example.com:alice");
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret,
      issuer: "hub.example.com",
      algorithm: "SHA1",
      digits: "6",
      period: "30",
    });
    expect(otpauthUri({ secret, issuer: "My Hub", account: "a b" })).toMatch(
      /^otpauth:\/\/totp\/My%20Hub:a%20b\?secret=[A-Z2-7]+&issuer=My%20Hub&/,
    );
  });
});
