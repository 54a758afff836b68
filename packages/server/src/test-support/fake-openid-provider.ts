import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the next ID token is spoiled, to check the hub refuses it. */
export type Tamper =
  "wrong-signature" | "wrong-audience" | "wrong-issuer" | "expired" | "wrong-nonce" | "unsigned" | null;

/** Who the provider signs in, as if they had approved the consent screen. */
export interface ProviderUser {
  subject: string;
  email: string;
  /** Whether the provider vouches for the email (default true); null leaves the claim out. */
  emailVerified?: boolean | null;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  nonce: string;
  challenge: string;
  user: ProviderUser;
}

/** What the token endpoint was sent, for checks on client authentication and PKCE. */
export interface TokenRequest {
  authorization: string | undefined;
  form: Record<string, string>;
}

const b64url = (value: Buffer | string) => Buffer.from(value).toString("base64url");

/**
 * A stand-in for a remote OpenID Connect provider (the kind of third-party
 * service the suite may fake), on loopback: discovery, a JWK Set with a
 * generated RSA key, an authorization endpoint that approves at once as
 * `user`, and a token endpoint that checks the client secret (HTTP Basic) and
 * the PKCE S256 verifier and returns an RS256 ID token, spoiled as `tamper`
 * says.
 */
export class FakeOpenIdProvider {
  issuer = "";
  user: ProviderUser = { subject: "subject-1", email: "someone@example.com" };
  tamper: Tamper = null;
  /** The authorization endpoint answers the redirect URI with this OAuth error instead of a code. */
  denyWith: string | null = null;
  readonly tokenRequests: TokenRequest[] = [];
  /** The ID tokens issued, so tests can check none reached the hub's log. */
  readonly issuedTokens: string[] = [];
  private readonly clients = new Map<string, string>();
  private readonly codes = new Map<string, IssuedCode>();
  private readonly key = generateKeyPairSync("rsa", { modulusLength: 2048 });
  private readonly otherKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  private readonly kid = randomBytes(8).toString("hex");
  private readonly server = http.createServer((request, response) => void this.handle(request, response));

  /** `path` puts the issuer below the root, as multi-tenant providers do (`/realms/acme`). */
  async start(path = "/realms/test"): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Registers a client the token endpoint accepts. */
  registerClient(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", this.issuer);
    const path = url.pathname.slice(new URL(this.issuer).pathname.length);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "GET" && path === "/.well-known/openid-configuration") {
      return json(200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: `${this.issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      });
    }
    if (request.method === "GET" && path === "/jwks") {
      const jwk = this.key.publicKey.export({ format: "jwk" });
      return json(200, { keys: [{ ...jwk, kid: this.kid, use: "sig", alg: "RS256" }] });
    }
    if (request.method === "GET" && path === "/authorize") return this.authorize(url, response);
    if (request.method === "POST" && path === "/token") {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      this.tokenRequests.push({ authorization: request.headers.authorization, form });
      const answer = this.token(request.headers.authorization, form);
      return json(answer.status, answer.body);
    }
    json(404, { error: "not_found" });
  }

  private authorize(url: URL, response: ServerResponse): void {
    const param = (name: string) => url.searchParams.get(name) ?? "";
    const redirect = new URL(param("redirect_uri"));
    const ok =
      this.clients.has(param("client_id")) &&
      param("response_type") === "code" &&
      param("scope").split(" ").includes("openid") &&
      param("code_challenge_method") === "S256" &&
      param("code_challenge").length === 43 &&
      param("nonce").length > 0;
    if (!ok || this.denyWith) {
      redirect.searchParams.set("error", this.denyWith ?? "invalid_request");
      redirect.searchParams.set("error_description", "The fake provider refused the request.");
    } else {
      const code = randomBytes(16).toString("hex");
      this.codes.set(code, {
        clientId: param("client_id"),
        redirectUri: param("redirect_uri"),
        nonce: param("nonce"),
        challenge: param("code_challenge"),
        user: this.user,
      });
      redirect.searchParams.set("code", code);
    }
    redirect.searchParams.set("state", param("state"));
    response.writeHead(302, { location: redirect.href });
    response.end();
  }

  private token(
    authorization: string | undefined,
    form: Record<string, string>,
  ): { status: number; body: unknown } {
    const basic = Buffer.from((authorization ?? "").replace(/^Basic /, ""), "base64").toString("utf8");
    const [clientId = "", clientSecret = ""] = basic.split(":").map(decodeURIComponent);
    if (!this.clients.has(clientId) || this.clients.get(clientId) !== clientSecret) {
      return { status: 401, body: { error: "invalid_client" } };
    }
    const issued = this.codes.get(form.code ?? "");
    this.codes.delete(form.code ?? "");
    const challenge = createHash("sha256")
      .update(form.code_verifier ?? "")
      .digest("base64url");
    if (
      form.grant_type !== "authorization_code" ||
      !issued ||
      issued.clientId !== clientId ||
      issued.redirectUri !== form.redirect_uri ||
      issued.challenge !== challenge
    ) {
      return { status: 400, body: { error: "invalid_grant" } };
    }
    const idToken = this.idToken(issued);
    this.issuedTokens.push(idToken);
    return {
      status: 200,
      body: {
        access_token: randomBytes(16).toString("hex"),
        token_type: "Bearer",
        expires_in: 300,
        id_token: idToken,
      },
    };
  }

  private idToken(issued: IssuedCode): string {
    const tamper = this.tamper;
    this.tamper = null;
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: tamper === "unsigned" ? "none" : "RS256", typ: "JWT", kid: this.kid };
    const claims = {
      iss: tamper === "wrong-issuer" ? `${this.issuer}/other` : this.issuer,
      aud: tamper === "wrong-audience" ? "another-client" : issued.clientId,
      sub: issued.user.subject,
      email: issued.user.email,
      ...(issued.user.emailVerified === null ? {} : { email_verified: issued.user.emailVerified ?? true }),
      nonce: tamper === "wrong-nonce" ? "not-the-nonce" : issued.nonce,
      iat: tamper === "expired" ? now - 7200 : now,
      exp: tamper === "expired" ? now - 3600 : now + 300,
    };
    const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    if (tamper === "unsigned") return `${signingInput}.`;
    const key: KeyObject = tamper === "wrong-signature" ? this.otherKey : this.key.privateKey;
    return `${signingInput}.${b64url(sign("RSA-SHA256", Buffer.from(signingInput), key))}`;
  }
}
