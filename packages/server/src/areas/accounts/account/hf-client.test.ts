import { whoAmI } from "@huggingface/hub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../../../test-support/hub-process.js";

describe("the official @huggingface/hub client against the hub", () => {
  let hub: TestHub;
  let token: string;

  beforeAll(async () => {
    hub = await startHub();
    await hub.createUser("alice");
    await hub.cli(["org", "create", "acme", "--owner", "alice"]);
    token = await hub.createToken("alice", ["--role", "write"]);
  });
  afterAll(() => hub?.stop());

  it("whoAmI reads the identity, the organizations and the token's creation time", async () => {
    const identity = await whoAmI({ accessToken: token, hubUrl: hub.url });
    expect(identity.type).toBe("user");
    expect(identity.name).toBe("alice");
    expect(identity.auth.type).toBe("access_token");
    expect(identity.auth.accessToken?.role).toBe("write");
    expect(identity.auth.accessToken?.createdAt).toBeInstanceOf(Date);
    expect(Math.abs((identity.auth.accessToken?.createdAt.getTime() ?? 0) - Date.now())).toBeLessThan(
      120_000,
    );
    expect("orgs" in identity && identity.orgs.map((org) => org.name)).toEqual(["acme"]);
  });

  it("whoAmI surfaces the hub's error message for a revoked-or-unknown token", async () => {
    await expect(
      whoAmI({ accessToken: "hf_unknownunknownunknownunknownunkno", hubUrl: hub.url }),
    ).rejects.toThrow(/invalid, revoked or expired/);
  });
});
