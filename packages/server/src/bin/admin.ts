import { parseArgs, type ParseArgsConfig } from "node:util";
import { TOKEN_ROLES, type TokenRole } from "@hub/api";
import { ConfigError, SURFACES, loadConfig, withFreePorts, type Surface } from "../config.js";
import { HubError } from "../errors.js";
import { createHub } from "../app/create-hub.js";
import { AVATAR_NAMESPACE, localAvatars } from "../areas/accounts/profile/avatar-store.js";
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
                                          copy the data dir's LFS and Xet objects and avatars to an
                                          S3-compatible store (HUB_S3_* settings), verifying each; run it
                                          again after an interruption

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

/** Where an admin command reads its input and writes its output: the process's own, or a test's. */
export interface AdminIo {
  env: NodeJS.ProcessEnv;
  /** The whole of standard input. */
  stdin: () => Promise<string>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
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
async function withHub<T>(
  io: AdminIo,
  run: (hub: Awaited<ReturnType<typeof createHub>>) => Promise<T>,
): Promise<T> {
  const config = loadConfig(io.env);
  const hub = await createHub(config, createLogger({ ...config, logLevel: "warn" }, 2));
  try {
    return await run(hub);
  } finally {
    await hub.close();
  }
}

async function main(argv: string[], io: AdminIo): Promise<number> {
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
    await serve(loadConfig(await withFreePorts(io.env)), only as Surface[]);
    return 0;
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
    // A password piped in or typed ends with a line break that is not part of it.
    const password = (await io.stdin()).replace(/\r?\n$/, "");
    const user = await withHub(io, (hub) =>
      hub.account.createUser({
        handle: positionals[0] ?? "",
        email,
        password,
        fullname: str(values.fullname),
        admin: values.admin === true,
      }),
    );
    io.stdout(`created user ${user.handle} (${user.id})\n`);
    return 0;
  }
  if (command === "user" && sub === "verify-email") {
    const { positionals } = parse(rest, {}, 1);
    await withHub(io, (hub) => hub.account.verifyEmail(positionals[0] ?? ""));
    io.stdout(`the email of ${positionals[0]} is verified\n`);
    return 0;
  }
  if (command === "user" && sub === "mfa-reset") {
    const { positionals } = parse(rest, {}, 1);
    const removed = await withHub(io, async (hub) => {
      const user = await hub.account.findUser(positionals[0] ?? "");
      return hub.mfa.reset(user.id);
    });
    io.stdout(
      removed
        ? `two-factor authentication of ${positionals[0]} is off; they sign in with the password alone and can enroll again\n`
        : `${positionals[0]} had no two-factor authentication; nothing changed\n`,
    );
    return 0;
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
    const created = await withHub(io, async (hub) => {
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
    io.stdout(
      `created token ${created.name} (${created.token_id}) for ${positionals[0]}\n${created.token}\n`,
    );
    return 0;
  }
  if (command === "org" && sub === "create") {
    const { values, positionals } = parse(
      rest,
      { owner: { type: "string" }, plan: { type: "string" }, fullname: { type: "string" } },
      1,
    );
    const owner = str(values.owner);
    if (!owner) throw new UsageError("org create needs --owner.");
    const org = await withHub(io, (hub) =>
      hub.orgs.createOrganization({
        handle: positionals[0] ?? "",
        ownerHandle: owner,
        plan: str(values.plan),
        fullname: str(values.fullname),
      }),
    );
    io.stdout(`created organization ${org.handle} (${org.id}), plan ${org.plan}, admin ${owner}\n`);
    return 0;
  }
  if (command === "org" && sub === "add-member") {
    const { values, positionals } = parse(rest, { role: { type: "string" } }, 2);
    const role = str(values.role);
    if (!role) throw new UsageError("org add-member needs --role.");
    await withHub(io, (hub) => hub.orgs.addMember(positionals[0] ?? "", positionals[1] ?? "", role));
    io.stdout(`${positionals[1]} is now ${role} in ${positionals[0]}\n`);
    return 0;
  }
  if (command === "identity" && sub === "link") {
    const { values, positionals } = parse(rest, { visible: { type: "boolean" } }, 3);
    const [handle = "", provider = "", externalName = ""] = positionals;
    const identity = await withHub(io, (hub) =>
      hub.identities.link(handle, provider, externalName, values.visible === true),
    );
    io.stdout(
      `linked ${provider} identity ${identity.name} to ${handle} (${identity.visible ? "shown" : "hidden"} on the profile)\n`,
    );
    return 0;
  }
  if (command === "identity" && sub === "unlink") {
    const { positionals } = parse(rest, {}, 2);
    await withHub(io, (hub) => hub.identities.unlink(positionals[0] ?? "", positionals[1] ?? ""));
    io.stdout(`unlinked the ${positionals[1]} identity of ${positionals[0]}\n`);
    return 0;
  }
  if (command === "credit" && sub === "add") {
    const { values, positionals } = parse(rest, { note: { type: "string" } }, 2);
    const usd = Number(positionals[1]);
    const balance = await withHub(io, (hub) =>
      hub.inference.addCredit(positionals[0] ?? "", usd, str(values.note) ?? "added with hubd credit add"),
    );
    io.stdout(`${positionals[0]} now has ${balance.toFixed(2)} USD of credit\n`);
    return 0;
  }
  if (command === "credit" && sub === "restrict") {
    const { values, positionals } = parse(rest, { lift: { type: "boolean" } }, 1);
    await withHub(io, (hub) => hub.inference.setRestricted(positionals[0] ?? "", values.lift !== true));
    io.stdout(
      `${positionals[0]}: routed inference ${values.lift === true ? "allowed again" : "restricted"}\n`,
    );
    return 0;
  }
  if (command === "billing" && sub === "plan") {
    const { positionals } = parse(rest, {}, 2);
    const plan = await withHub(io, (hub) => hub.billing.setPlan(positionals[0] ?? "", positionals[1] ?? ""));
    io.stdout(`${positionals[0]} is on the ${plan} plan\n`);
    return 0;
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
    const method = await withHub(io, (hub) =>
      hub.billing.setPaymentMethod(positionals[0] ?? "", {
        brand,
        last4,
        expires,
        holder: str(values.holder),
        email: str(values.email),
        country: str(values.country),
      }),
    );
    io.stdout(
      `${positionals[0]} has ${method.masked}, expiring ${method.expYear}-${String(method.expMonth).padStart(2, "0")}, on file\n`,
    );
    return 0;
  }
  if (command === "billing" && sub === "payment-method" && rest[0] === "remove") {
    const { positionals } = parse(rest.slice(1), {}, 1);
    await withHub(io, (hub) => hub.billing.removePaymentMethod(positionals[0] ?? ""));
    io.stdout(`${positionals[0]} has no payment method on file\n`);
    return 0;
  }
  if (command === "storage" && sub === "migrate") {
    const { values } = parse(rest, { to: { type: "string" } }, 0);
    const to = str(values.to);
    if (!to?.startsWith("s3://")) throw new UsageError("storage migrate needs --to s3://BUCKET[/PREFIX].");
    const config = loadConfig(io.env);
    // The target is a bucket: the local store's nginx hand-off (HUB_ACCEL_REDIRECT) is no setting of it.
    const target = loadConfig({ ...io.env, HUB_OBJECT_STORE: to, HUB_ACCEL_REDIRECT: "" });
    const done = (report: MigrationReport) => report.copied + report.present + report.failed.length;
    const report = await migrateObjects(
      createLocalObjectStore(config.dataDir),
      createObjectStore(target),
      [XORB_NAMESPACE, { name: AVATAR_NAMESPACE, from: localAvatars(config.dataDir), namedBySha256: true }],
      (progress) => {
        if (done(progress) % 1000 === 0) io.stderr(`hubd: ${done(progress)} objects so far\n`);
      },
    );
    for (const failure of report.failed) {
      const name = failure.namespace ? `${failure.namespace}/${failure.key}` : failure.key;
      io.stderr(`hubd: ${name} was not copied: ${failure.reason}\n`);
    }
    io.stdout(
      `copied ${report.copied} objects (${report.copiedBytes} bytes), ${report.present} already there and verified, ${report.failed.length} failed\n`,
    );
    return report.failed.length > 0 ? 1 : 0;
  }
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  throw new UsageError(`Unknown command "${argv.join(" ")}".`);
}

/**
 * Runs one `hubd` command with `argv` (after the program's name) and answers its exit code: 2 for a
 * usage error, 1 for a refusal or failure (the message on standard error), 0 when done. `serve` answers
 * once its listeners are up; the process then runs until a signal stops it.
 */
export async function runAdmin(argv: string[], io: AdminIo): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`hubd: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof HubError || err instanceof ConfigError) {
      io.stderr(`hubd: ${err.message}\n`);
      return 1;
    }
    io.stderr(`hubd: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}
