import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  PatchProfile,
  Profile,
  PutProfile,
  SocialIdentity,
  UpdateSocialIdentity,
  UserOverview,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { badRequest } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { AVATAR_TYPES } from "./avatar-image.js";
import type { ProfileService } from "./profile.service.js";
import type { SocialIdentities } from "./social-identities.js";

const tags = ["Account"];
const UserParams = Type.Object({ name: Type.String({ maxLength: 100 }) });
const NoContent = { type: "null", description: "Done." } as const;

/**
 * Reads a raw upload into one buffer, refusing it with a 400 as soon as it
 * grows past `maxBytes` (the declared length is checked before reading).
 */
function rawUploadParser(maxBytes: number) {
  return (
    request: FastifyRequest,
    payload: NodeJS.ReadableStream,
    done: (err: Error | null, body?: Buffer) => void,
  ) => {
    const tooLarge = () =>
      badRequest("avatar_too_large", `Avatars may have at most ${maxBytes} bytes; send a smaller image.`);
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > maxBytes) {
      done(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const finish = (err: Error | null, body?: Buffer) => {
      if (finished) return;
      finished = true;
      done(err, body);
    };
    payload.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        payload.removeAllListeners("data");
        payload.resume();
        finish(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    payload.on("end", () => finish(null, Buffer.concat(chunks)));
    payload.on("error", (err: Error) => finish(err));
  };
}

/**
 * The editable profile (`/api/me/profile`), the avatar (`/api/me/avatar`) and
 * the public profile and avatar of every user (`/api/users/{name}/...`).
 * Changing the profile is a settings action: a session or a write role token.
 */
export function profileRoutes({
  profiles,
  identities,
  avatarMaxBytes,
}: {
  profiles: ProfileService;
  identities: SocialIdentities;
  avatarMaxBytes: number;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.patch(
      "/api/me/social-identities/:provider",
      {
        schema: {
          operationId: "account_social_identity_visibility_update",
          tags,
          summary:
            "Show or hide a linked identity (e.g. github) on the public profile; 404 when none is linked.",
          params: Type.Object({
            provider: Type.String({
              pattern: "^[a-z0-9-]{1,32}$",
              description: "The provider, e.g. `github`.",
            }),
          }),
          body: UpdateSocialIdentity,
          response: { 200: SocialIdentity, 404: ApiErrorRef },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) =>
        identities.setVisibility(principalOf(request).userId, request.params.provider, request.body.visible),
    );

    app.put(
      "/api/me/profile",
      {
        schema: {
          operationId: "account_profile_put",
          tags,
          summary: "Replace the editable profile: display name, bio, website, location and social handles.",
          body: PutProfile,
          response: { 200: Profile },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) => profiles.put(principalOf(request).userId, request.body),
    );

    app.patch(
      "/api/me/profile",
      {
        schema: {
          operationId: "account_profile_patch",
          tags,
          summary: "Change some fields of the editable profile (a JSON merge patch: null clears a field).",
          body: PatchProfile,
          response: { 200: Profile },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) => profiles.patch(principalOf(request).userId, request.body),
    );

    app.get(
      "/api/users/:name/overview",
      {
        schema: {
          operationId: "user_overview_get",
          tags: ["Users"],
          summary: "A user's public profile, with public repository counts and organizations.",
          params: UserParams,
          response: { 200: UserOverview, 307: ApiErrorRef, 404: ApiErrorRef },
        },
        config: { access: "public" },
      },
      async (request) => profiles.overview(request.params.name, request.url),
    );

    app.get(
      "/api/users/:name/avatar",
      {
        schema: {
          operationId: "user_avatar_get",
          tags: ["Users"],
          summary: "A user's avatar image: the one they set, or a default drawn from the handle (SVG).",
          params: UserParams,
          querystring: Type.Object({
            v: Type.Optional(
              Type.String({ maxLength: 64, description: "The image version `avatarUrl` carries." }),
            ),
          }),
          response: {
            200: {
              description: "The image.",
              content: { "image/*": { schema: { type: "string", format: "binary" } } },
            },
            304: { description: "Not modified since the ETag sent in If-None-Match.", type: "null" },
            404: ApiErrorRef,
          },
        },
        config: { access: "public" },
      },
      async (request, reply) => {
        const image = await profiles.avatar(request.params.name, request.url);
        const etag = `"${image.etag}"`;
        const versioned = request.query.v !== undefined && image.etag.startsWith(request.query.v);
        reply
          .header("etag", etag)
          .header("cache-control", versioned ? "public, max-age=31536000, immutable" : "public, max-age=300")
          .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox");
        const match = request.headers["if-none-match"];
        if (match && match.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
          return reply.status(304).send();
        }
        return reply.header("content-type", image.type).send(image.content);
      },
    );

    app.delete(
      "/api/me/avatar",
      {
        schema: {
          operationId: "account_avatar_delete",
          tags,
          summary: "Remove the avatar; the default one shows again.",
          response: { 204: NoContent },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request, reply) => {
        await profiles.deleteAvatar(principalOf(request).userId);
        return reply.status(204).send();
      },
    );

    // The upload reads its body raw, so it lives in a context with its own content parser.
    await app.register(async (raw: FastifyInstance) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser("*", rawUploadParser(avatarMaxBytes));
      raw.put(
        "/api/me/avatar",
        {
          schema: {
            operationId: "account_avatar_update",
            tags,
            summary: `Set the avatar: the raw image file as the body (${AVATAR_TYPES.join(", ")}; at most ${avatarMaxBytes} bytes). Its type is read from its bytes, not from Content-Type.`,
            consumes: ["text/plain"],
            body: { type: "string", format: "binary" },
            response: { 200: Profile },
          },
          config: { access: { action: "settings:write" }, rawBody: true },
        },
        async (request) => {
          if (!Buffer.isBuffer(request.body))
            throw badRequest("invalid_avatar", "The body is empty; send the image file's bytes.");
          return profiles.setAvatar(principalOf(request).userId, request.body);
        },
      );
    });
  };
}
