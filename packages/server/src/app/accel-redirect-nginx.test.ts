import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { XetReconstruction, XetToken } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logLinesSince, runPythonDriver } from "../test-support/hf-driver.js";
import { freePorts, readJson, startHub, type TestHub } from "../test-support/hub-process.js";
import { documentedNginxBlock, holdPort, startNginx, type TestNginx } from "../test-support/nginx.js";

const CHECKOUT = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env.HUB_TEST_PYTHON ?? path.join(CHECKOUT, ".venv", "bin", "python");
const XET_DRIVER = fileURLToPath(
  new URL("../areas/repositories/xet/testdata/hf_xet_driver.py", import.meta.url),
);

type Batch = {
  objects: Array<{ actions?: Record<string, { href: string; header?: Record<string, string> }> }>;
};

/**
 * docs/deployment.md's "Let nginx send the files" block, run as written (only the address, port and data dir
 * replaced) in front of one hub on SQLite and local disk with HUB_ACCEL_REDIRECT: the hub decides, nginx sends.
 */
describe("nginx sending LFS files for the hub (X-Accel-Redirect)", () => {
  let hub: TestHub;
  let nginx: TestNginx | null = null;
  let work: string;
  let port = 0;
  let token: string;
  const content = randomBytes(3 * 1024 * 1024 + 17);
  const oid = createHash("sha256").update(content).digest("hex");
  let commit = "";

  const viaNginx = (pathname: string, init: RequestInit = {}, withToken = true) =>
    fetch(`http://127.0.0.1:${port}${pathname}`, {
      ...init,
      headers: {
        ...(withToken ? { authorization: `Bearer ${token}` } : {}),
        ...(init.headers as Record<string, string>),
      },
    });

  beforeAll(async () => {
    [port = 0] = await freePorts(1);
    const held = [await holdPort(port)];
    const publicUrl = `http://127.0.0.1:${port}`;
    hub = await startHub({
      env: { HUB_PUBLIC_URL: publicUrl, HUB_GIT_PUBLIC_URL: publicUrl, HUB_ACCEL_REDIRECT: "/_hub_lfs/" },
    });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-accel-"));
    const site = documentedNginxBlock(/X-Accel-Redirect/)
      .replace("listen 80;", `listen 127.0.0.1:${port};`)
      .replace("proxy_pass http://127.0.0.1:8080;", `proxy_pass ${hub.url};`)
      .replace("alias /srv/hub/lfs/;", `alias ${path.join(hub.dataDir, "lfs")}/;`);
    expect(site).not.toMatch(/listen 80;|:8080;|\/srv\/hub/);
    nginx = await startNginx(work, site, { port, held });

    await hub.createUser("alice");
    token = await hub.createToken("alice");
    for (const [repo, priv] of [
      ["alice/weights", false],
      ["alice/secret", true],
    ] as const) {
      const created = await viaNginx("/api/repos", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ repo_id: repo, private: priv }),
      });
      expect(created.status).toBe(201);
      const batch = await viaNginx(`/${repo}.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json" },
        body: JSON.stringify({ operation: "upload", objects: [{ oid, size: content.length }] }),
      });
      const upload = (await readJson<Batch>(batch)).objects[0]?.actions?.upload;
      if (upload) {
        const put = await fetch(upload.href, { method: "PUT", headers: upload.header, body: content });
        expect(put.status).toBe(200);
      }
      const committed = await viaNginx(`/api/models/${repo}/commit/main`, {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: [
          { key: "header", value: { summary: "Add weights" } },
          { key: "lfsFile", value: { path: "model.bin", algo: "sha256", oid, size: content.length } },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n"),
      });
      expect(committed.status).toBe(200);
      if (repo === "alice/weights") commit = (await readJson<{ commitOid: string }>(committed)).commitOid;
    }
  });
  afterAll(async () => {
    await nginx?.stop();
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("sends a resolved LFS file from nginx with the hub's headers, whole and by range", async () => {
    const whole = await viaNginx("/alice/weights/resolve/main/model.bin");
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(content)).toBe(true);
    // nginx's static module sent it (the hub sets no Last-Modified); the hub's headers came along.
    expect(whole.headers.get("last-modified")).not.toBeNull();
    expect(whole.headers.get("x-accel-redirect")).toBeNull();
    expect(whole.headers.get("etag")).toBe(`"${oid}"`);
    expect(whole.headers.get("x-linked-etag")).toBe(`"${oid}"`);
    expect(whole.headers.get("x-linked-size")).toBe(String(content.length));
    expect(whole.headers.get("x-repo-commit")).toBe(commit);
    expect(whole.headers.get("content-length")).toBe(String(content.length));

    const part = await viaNginx("/alice/weights/resolve/main/model.bin", {
      headers: { range: "bytes=10-19" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-19/${content.length}`);
    expect(part.headers.get("last-modified")).not.toBeNull();
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(10, 20))).toBe(true);

    // HEAD is the hub's own answer, as before.
    const head = await viaNginx("/alice/weights/resolve/main/model.bin", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("last-modified")).toBeNull();
    expect(head.headers.get("content-length")).toBe(String(content.length));
  });

  it("sends the LFS transfer href's object from nginx", async () => {
    const batch = await viaNginx("/alice/weights.git/info/lfs/objects/batch", {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json" },
      body: JSON.stringify({ operation: "download", objects: [{ oid, size: content.length }] }),
    });
    const download = (await readJson<Batch>(batch)).objects[0]?.actions?.download;
    expect(download?.href.startsWith(`http://127.0.0.1:${port}/`)).toBe(true);
    const fetched = await fetch(download?.href ?? "", { headers: download?.header });
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("last-modified")).not.toBeNull();
    expect(Buffer.from(await fetched.arrayBuffer()).equals(content)).toBe(true);
  });

  it("still decides every download in the hub, and keeps the files' location internal", async () => {
    const anonymous = await viaNginx("/alice/secret/resolve/main/model.bin", {}, false);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.arrayBuffer()).byteLength).toBeLessThan(1000);
    const internal = await viaNginx(
      `/_hub_lfs/objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`,
      {},
      false,
    );
    expect(internal.status).toBe(404);
    // A client's own X-Sendfile-Type is replaced by nginx's, and one sent to the hub directly only names the file.
    const forged = await viaNginx("/alice/secret/resolve/main/model.bin", {
      headers: { "x-sendfile-type": "none" },
    });
    expect(forged.headers.get("last-modified")).not.toBeNull();
    expect(Buffer.from(await forged.arrayBuffer()).equals(content)).toBe(true);
    // Signed in without access, or with a tampered href: the hub refuses, and nginx sends nothing.
    await hub.createUser("bob");
    const bob = await hub.createToken("bob");
    const stranger = await fetch(`http://127.0.0.1:${port}/alice/secret/resolve/main/model.bin`, {
      headers: { authorization: `Bearer ${bob}` },
    });
    expect([403, 404]).toContain(stranger.status);
    expect((await stranger.arrayBuffer()).byteLength).toBeLessThan(1000);
    const batch = await viaNginx("/alice/weights.git/info/lfs/objects/batch", {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json" },
      body: JSON.stringify({ operation: "download", objects: [{ oid, size: content.length }] }),
    });
    const download = (await readJson<Batch>(batch)).objects[0]?.actions?.download;
    const href = new URL(download?.href ?? "");
    const tampered = [...href.searchParams.keys()].reduce((url, key) => {
      url.searchParams.set(key, `${url.searchParams.get(key) ?? ""}x`);
      return url;
    }, new URL(href));
    const refused = await fetch(tampered, { headers: download?.header });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect((await refused.arrayBuffer()).byteLength).toBeLessThan(1000);
    // A conditional request is the hub's to answer: nginx would honour If-None-Match and If-Range itself.
    const conditional = await viaNginx("/alice/weights/resolve/main/model.bin", {
      headers: { "if-none-match": '"something-else"' },
    });
    expect(conditional.status).toBe(200);
    expect(conditional.headers.get("last-modified")).toBeNull();
    expect(Buffer.from(await conditional.arrayBuffer()).equals(content)).toBe(true);
    const direct = await hub.request("/alice/weights/resolve/main/model.bin", {
      token,
      headers: { "x-sendfile-type": "X-Accel-Redirect" },
    });
    expect(direct.headers.get("x-accel-redirect")).toBe(
      `/_hub_lfs/objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`,
    );
    expect((await direct.arrayBuffer()).byteLength).toBe(0);
  });

  it("sends the xorb ranges the Python client (hf_xet) fetches from nginx", async () => {
    expect(existsSync(PYTHON), `no Python with huggingface_hub and hf_xet at ${PYTHON}: run .ci/run`).toBe(
      true,
    );
    const data = randomBytes(2 * 1024 * 1024 + 5);
    const file = path.join(work, "xet.bin");
    writeFileSync(file, data);
    const python = (request: Record<string, unknown>) =>
      runPythonDriver<Record<string, unknown>>(
        PYTHON,
        XET_DRIVER,
        { repo_id: "alice/weights", ...request },
        {
          HOME: work,
          HF_HOME: path.join(work, "hf"),
          HF_ENDPOINT: `http://127.0.0.1:${port}`,
          HF_TOKEN: token,
          HF_HUB_DISABLE_TELEMETRY: "1",
          HF_HUB_DISABLE_PROGRESS_BARS: "1",
        },
      );
    const uploaded = await python({ op: "upload_file", path: file, path_in_repo: "xet.bin" });
    expect(uploaded.xet).toBe(true);
    const from = hub.logs.length;
    const downloaded = await python({ op: "download", files: ["xet.bin"] });
    expect(downloaded["xet.bin"]).toBe(createHash("sha256").update(data).digest("hex"));
    // The hub answered each range fetch with X-Accel-Redirect (200, no body, logged as sent by nginx) and nginx
    // sent the 206.
    const fetches = logLinesSince<{ path?: string; status?: number; sentBy?: string }>(hub.logs, from).filter(
      (line) => line.path?.includes("/fetch/"),
    );
    expect(fetches.length).toBeGreaterThan(0);
    expect(fetches.map((line) => [line.status, line.sentBy])).toEqual(fetches.map(() => [200, "nginx"]));

    // A signed fetch URL grants its window only, and the hub sends it itself whenever nginx might send more.
    const head = await viaNginx("/alice/weights/resolve/main/xet.bin", { method: "HEAD" });
    const links = head.headers.get("link") ?? "";
    const tokenUrl = /<([^>]+)>; rel="xet-auth"/.exec(links)?.[1];
    const reconstructionUrl = /<([^>]+)>; rel="xet-reconstruction-info"/.exec(links)?.[1];
    expect(tokenUrl && reconstructionUrl, links).toBeTruthy();
    const xetToken = await readJson<XetToken>(
      await fetch(tokenUrl ?? "", { headers: { authorization: `Bearer ${token}` } }),
    );
    const plan = await readJson<XetReconstruction>(
      await fetch(reconstructionUrl ?? "", { headers: { authorization: `Bearer ${xetToken.accessToken}` } }),
    );
    const [fetchInfo] = Object.values(plan.fetch_info).flat();
    expect(fetchInfo?.url.startsWith(`http://127.0.0.1:${port}/`)).toBe(true);
    const window = fetchInfo?.url_range ?? { start: 0, end: 0 };
    // Without a Range the window is sent; with an If-Range nginx would drop the Range and send the whole xorb.
    for (const [headers, bytes] of [
      [{}, window.end - window.start + 1],
      [{ range: `bytes=${window.start}-${window.start + 99}`, "if-range": '"not-this-one"' }, 100],
    ] as const) {
      const answer = await fetch(fetchInfo?.url ?? "", { headers });
      expect(answer.status, JSON.stringify(headers)).toBe(206);
      expect(answer.headers.get("last-modified")).toBeNull();
      expect((await answer.arrayBuffer()).byteLength).toBe(bytes);
    }
  });

  it("serves the bytes itself to a request that did not come through nginx", async () => {
    const direct = await hub.request("/alice/weights/resolve/main/model.bin", { token });
    expect(direct.status).toBe(200);
    expect(direct.headers.get("x-accel-redirect")).toBeNull();
    expect(Buffer.from(await direct.arrayBuffer()).equals(content)).toBe(true);
  });
});
