export * from "./errors.js";
export * from "./scopes.js";
export * from "./tokens.js";
export * from "./identity.js";
export * from "./auth.js";
export * from "./repos.js";
export * from "./orgs.js";
export * from "./keys.js";
