#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from "node:util";
import { TOKEN_ROLES, type TokenRole } from "@hub/api";
import { ConfigError, SURFACES, loadConfig, withFreePorts, type Surface } from "../config.js";
import { HubError } from "../errors.js";
import { createHub } from "../app/create-hub.js";
import { XORB_NAMESPACE } from "../areas/repositories/xet/xet.service.js";
import { createObjectStore } from "../git/lfs/create-object-store.js";
import { createLocalObjectStore } from "../git/lfs/local-object-store.js";
import { migrateObjects, type MigrationReport } from "../git/lfs/migrate-objects.js";
import { createLogger, serve } from "../main.js";

const USAGE = `Usage: hubd <command>

  serve [--only hub,git,router,ssh]       start the hub (every surface by default)
  user create NAME --email EMAIL --password-stdin [--admin] [--fullname TEXT]
  user verify-email NAME                  mark the account's email verified
  user mfa-reset NAME                     turn off the account's two-factor authentication (a lost device)
  token create NAME --name TOKEN_NAME (--role read|write|admin | --scopes a,b)
        [--org HANDLE] [--repos owner/name,...] [--expires-in 30d]
                                          prints the secret alone on the last line
  org create HANDLE --owner USER [--plan free|team|enterprise] [--fullname TEXT]
  org add-member HANDLE USER --role read|contributor|write|admin
  identity link HANDLE PROVIDER EXTERNAL_NAME [--visible]
                                          link an identity at a provider (github, gitlab, ...) to the account
  identity unlink HANDLE PROVIDER         unlink it
  credit add HANDLE USD [--note TEXT]     add routed-inference credit to an account or organization
  credit restrict HANDLE [--lift]         stop (or allow again) its routed inference
  billing plan USER free|pro              put the account on a plan
  billing payment-method set USER --brand BRAND --last4 NNNN --expires YYYY-MM
        [--holder NAME] [--email EMAIL] [--country CC]
                                          record the masked payment method on file (never a card number)
  billing payment-method remove USER      forget it
  storage migrate --to s3://BUCKET[/PREFIX]
                                          copy the data dir's LFS and Xet objects to an S3-compatible store
                                          (HUB_S3_* settings), verifying each; run it again after an interruption

Configuration comes from HUB_* environment variables; see docs/configuration.md.`;

class UsageError extends Error {}

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean);
}

/** `30d`, `12h`, `45m` or `90s` from now, as an ISO date. */
function expiryFrom(value: string | undefined): string | null {
  if (value === undefined) return null;
  const match = /^(\d+)([dhms])$/.exec(value);
  if (!match)
    throw new UsageError(`--expires-in takes a number and a unit (d, h, m or s), like 30d; got "${value}".`);
  const seconds = { d: 86_400, h: 3_600, m: 60, s: 1 }[match[2] as "d" | "h" | "m" | "s"];
  return new Date(Date.now() + Number(match[1]) * seconds * 1000).toISOString();
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function parse(args: string[], options: ParseArgsConfig["options"], positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(`Expected ${positionals} argument(s), got ${parsed.positionals.length}.`);
  }
  return {
    values: parsed.values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
  };
}

const str = (value: string | boolean | undefined): string | undefined =>
  typeof value === "string" ? value : undefined;

/** Admin commands open the configured database directly, so they work whether or not the server runs. */
async function withHub<T>(run: (hub: Awaited<ReturnType<typeof createHub>>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const hub = await createHub(config, createLogger({ ...config, logLevel: "warn" }, 2));
  try {
    return await run(hub);
  } finally {
    await hub.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (command === "serve") {
    const { values } = parse(
      [sub, ...rest].filter((a): a is string => a !== undefined),
      { only: { type: "string" } },
      0,
    );
    const only = list(str(values.only)) ?? [...SURFACES];
    const unknown = only.find((name) => !SURFACES.some((s) => s === name));
    if (unknown) throw new UsageError(`Unknown surface "${unknown}"; choose from ${SURFACES.join(", ")}.`);
    await serve(loadConfig(await withFreePorts(process.env)), only as Surface[]);
    return;
  }
  if (command === "user" && sub === "create") {
    const { values, positionals } = parse(
      rest,
      {
        email: { type: "string" },
        "password-stdin": { type: "boolean" },
        admin: { type: "boolean" },
        fullname: { type: "string" },
      },
      1,
    );
    const email = str(values.email);
    if (!email || !values["password-stdin"])
      throw new UsageError("user create needs --email and --password-stdin.");
    const password = await readStdin();
    const user = await withHub((hub) =>
      hub.account.createUser({
        handle: positionals[0] ?? "",
        email,
        password,
        fullname: str(values.fullname),
        admin: values.admin === true,
      }),
    );
    process.stdout.write(`created user ${user.handle} (${user.id})\n`);
    return;
  }
  if (command === "user" && sub === "verify-email") {
    const { positionals } = parse(rest, {}, 1);
    await withHub((hub) => hub.account.verifyEmail(positionals[0] ?? ""));
    process.stdout.write(`the email of ${positionals[0]} is verified\n`);
    return;
  }
  if (command === "user" && sub === "mfa-reset") {
    const { positionals } = parse(rest, {}, 1);
    const removed = await withHub(async (hub) => {
      const user = await hub.account.findUser(positionals[0] ?? "");
      return hub.mfa.reset(user.id);
    });
    process.stdout.write(
      removed
        ? `two-factor authentication of ${positionals[0]} is off; they sign in with the password alone and can enroll again\n`
        : `${positionals[0]} had no two-factor authentication; nothing changed\n`,
    );
    return;
  }
  if (command === "token" && sub === "create") {
    const { values, positionals } = parse(
      rest,
      {
        name: { type: "string" },
        role: { type: "string" },
        scopes: { type: "string" },
        org: { type: "string" },
        repos: { type: "string" },
        "expires-in": { type: "string" },
      },
      1,
    );
    const name = str(values.name);
    if (!name) throw new UsageError("token create needs --name.");
    const role = str(values.role);
    if (role !== undefined && !TOKEN_ROLES.some((r) => r === role))
      throw new UsageError(`--role must be one of ${TOKEN_ROLES.join(", ")}.`);
    const created = await withHub(async (hub) => {
      const user = await hub.account.findUser(positionals[0] ?? "");
      return hub.tokens.create(user.id, {
        name,
        expiresAt: expiryFrom(str(values["expires-in"])),
        role: role as TokenRole | undefined,
        scopes: list(str(values.scopes)),
        organization: str(values.org),
        repositories: list(str(values.repos)),
      });
    });
    process.stdout.write(
      `created token ${created.name} (${created.token_id}) for ${positionals[0]}\n${created.token}\n`,
    );
    return;
  }
  if (command === "org" && sub === "create") {
    const { values, positionals } = parse(
      rest,
      { owner: { type: "string" }, plan: { type: "string" }, fullname: { type: "string" } },
      1,
    );
    const owner = str(values.owner);
    if (!owner) throw new UsageError("org create needs --owner.");
    const org = await withHub((hub) =>
      hub.orgs.createOrganization({
        handle: positionals[0] ?? "",
        ownerHandle: owner,
        plan: str(values.plan),
        fullname: str(values.fullname),
      }),
    );
    process.stdout.write(
      `created organization ${org.handle} (${org.id}), plan ${org.plan}, admin ${owner}\n`,
    );
    return;
  }
  if (command === "org" && sub === "add-member") {
    const { values, positionals } = parse(rest, { role: { type: "string" } }, 2);
    const role = str(values.role);
    if (!role) throw new UsageError("org add-member needs --role.");
    await withHub((hub) => hub.orgs.addMember(positionals[0] ?? "", positionals[1] ?? "", role));
    process.stdout.write(`${positionals[1]} is now ${role} in ${positionals[0]}\n`);
    return;
  }
  if (command === "identity" && sub === "link") {
    const { values, positionals } = parse(rest, { visible: { type: "boolean" } }, 3);
    const [handle = "", provider = "", externalName = ""] = positionals;
    const identity = await withHub((hub) =>
      hub.identities.link(handle, provider, externalName, values.visible === true),
    );
    process.stdout.write(
      `linked ${provider} identity ${identity.name} to ${handle} (${identity.visible ? "shown" : "hidden"} on the profile)\n`,
    );
    return;
  }
  if (command === "identity" && sub === "unlink") {
    const { positionals } = parse(rest, {}, 2);
    await withHub((hub) => hub.identities.unlink(positionals[0] ?? "", positionals[1] ?? ""));
    process.stdout.write(`unlinked the ${positionals[1]} identity of ${positionals[0]}\n`);
    return;
  }
  if (command === "credit" && sub === "add") {
    const { values, positionals } = parse(rest, { note: { type: "string" } }, 2);
    const usd = Number(positionals[1]);
    const balance = await withHub((hub) =>
      hub.inference.addCredit(positionals[0] ?? "", usd, str(values.note) ?? "added with hubd credit add"),
    );
    process.stdout.write(`${positionals[0]} now has ${balance.toFixed(2)} USD of credit\n`);
    return;
  }
  if (command === "credit" && sub === "restrict") {
    const { values, positionals } = parse(rest, { lift: { type: "boolean" } }, 1);
    await withHub((hub) => hub.inference.setRestricted(positionals[0] ?? "", values.lift !== true));
    process.stdout.write(
      `${positionals[0]}: routed inference ${values.lift === true ? "allowed again" : "restricted"}\n`,
    );
    return;
  }
  if (command === "billing" && sub === "plan") {
    const { positionals } = parse(rest, {}, 2);
    const plan = await withHub((hub) => hub.billing.setPlan(positionals[0] ?? "", positionals[1] ?? ""));
    process.stdout.write(`${positionals[0]} is on the ${plan} plan\n`);
    return;
  }
  if (command === "billing" && sub === "payment-method" && rest[0] === "set") {
    const { values, positionals } = parse(
      rest.slice(1),
      {
        brand: { type: "string" },
        last4: { type: "string" },
        expires: { type: "string" },
        holder: { type: "string" },
        email: { type: "string" },
        country: { type: "string" },
      },
      1,
    );
    const [brand, last4, expires] = [str(values.brand), str(values.last4), str(values.expires)];
    if (!brand || !last4 || !expires) {
      throw new UsageError("billing payment-method set needs --brand, --last4 and --expires.");
    }
    const method = await withHub((hub) =>
      hub.billing.setPaymentMethod(positionals[0] ?? "", {
        brand,
        last4,
        expires,
        holder: str(values.holder),
        email: str(values.email),
        country: str(values.country),
      }),
    );
    process.stdout.write(
      `${positionals[0]} has ${method.masked}, expiring ${method.expYear}-${String(method.expMonth).padStart(2, "0")}, on file\n`,
    );
    return;
  }
  if (command === "billing" && sub === "payment-method" && rest[0] === "remove") {
    const { positionals } = parse(rest.slice(1), {}, 1);
    await withHub((hub) => hub.billing.removePaymentMethod(positionals[0] ?? ""));
    process.stdout.write(`${positionals[0]} has no payment method on file\n`);
    return;
  }
  if (command === "storage" && sub === "migrate") {
    const { values } = parse(rest, { to: { type: "string" } }, 0);
    const to = str(values.to);
    if (!to?.startsWith("s3://")) throw new UsageError("storage migrate needs --to s3://BUCKET[/PREFIX].");
    const config = loadConfig();
    const target = loadConfig({ ...process.env, HUB_OBJECT_STORE: to });
    const done = (report: MigrationReport) => report.copied + report.present + report.failed.length;
    const report = await migrateObjects(
      createLocalObjectStore(config.dataDir),
      createObjectStore(target),
      [XORB_NAMESPACE],
      (progress) => {
        if (done(progress) % 1000 === 0) process.stderr.write(`hubd: ${done(progress)} objects so far\n`);
      },
    );
    for (const failure of report.failed) {
      const name = failure.namespace ? `${failure.namespace}/${failure.key}` : failure.key;
      process.stderr.write(`hubd: ${name} was not copied: ${failure.reason}\n`);
    }
    process.stdout.write(
      `copied ${report.copied} objects (${report.copiedBytes} bytes), ${report.present} already there and verified, ${report.failed.length} failed\n`,
    );
    if (report.failed.length > 0) process.exitCode = 1;
    return;
  }
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  throw new UsageError(`Unknown command "${argv.join(" ")}".`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`hubd: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (err instanceof HubError || err instanceof ConfigError) {
    process.stderr.write(`hubd: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`hubd: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
