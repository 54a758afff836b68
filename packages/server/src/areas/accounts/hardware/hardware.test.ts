import { createHash } from "node:crypto";
import type { ApiError, Hardware, HardwareCatalog, HardwareCompatibility } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

const GiB = 1024 ** 3;
const pointer = (seed: string, size: number) =>
  `version https://git-lfs.github.com/spec/v1\noid sha256:${createHash("sha256").update(seed).digest("hex")}\nsize ${size}\n`;

describe.each(DIALECTS)("declared hardware and model fit on %s", (dialect) => {
  let hub: InProcessHub;
  let write: string;
  let read: string;
  let fineGrained: string;

  const put = (json: unknown, token = write) =>
    hub.request("/api/me/hardware", { method: "PUT", token, json });
  const fit = async (repo: string, token?: string) => {
    const response = await hub.request(`/api/models/${repo}/hardware-compatibility`, token ? { token } : {});
    expect(response.status).toBe(200);
    return readJson<HardwareCompatibility>(response);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    await hub.createUser("bob");
    write = await hub.createToken("alice");
    read = await hub.createToken("alice", ["--role", "read"]);
    fineGrained = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    for (const name of ["big", "empty"]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: write,
        json: { repo_id: `alice/${name}` },
      });
      expect(created.status).toBe(201);
    }
    // Sharded weights as Git LFS pointers (40 + 10 GiB), committed as the plain files a push without git-lfs sends.
    const file = (filePath: string, text: string) => ({
      key: "file",
      value: { path: filePath, content: Buffer.from(text).toString("base64"), encoding: "base64" },
    });
    const commit = await hub.request("/api/models/alice/big/commit/main", {
      method: "POST",
      token: write,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        { key: "header", value: { summary: "weights" } },
        file("model-00001-of-00002.safetensors", pointer("one", 40 * GiB)),
        file("model-00002-of-00002.safetensors", pointer("two", 10 * GiB)),
        file("pytorch_model.bin", pointer("bin", 50 * GiB)),
        file("config.json", "{}\n"),
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    });
    expect(commit.status).toBe(200);
  });
  afterAll(() => hub?.stop());

  it("publishes the catalog it checks declarations against", async () => {
    const response = await hub.request("/api/hardware");
    expect(response.status).toBe(200);
    const catalog = await readJson<HardwareCatalog>(response);
    expect(catalog.accelerators).toContainEqual({
      id: "nvidia-rtx-4090",
      name: "NVIDIA GeForce RTX 4090",
      vendor: "NVIDIA",
      kind: "gpu",
      memoryGiB: 24,
    });
    expect(catalog.accelerators.find((a) => a.id === "apple-m3-max")?.memoryOptionsGiB).toContain(36);
    expect(catalog.cpus.map((c) => c.id)).toContain("amd-epyc");
  });

  it("stores a declaration against the catalog and shows its totals", async () => {
    const empty = await readJson<Hardware>(await hub.request("/api/me/hardware", { token: read }));
    expect(empty).toEqual({
      accelerators: [],
      cpu: null,
      systemMemoryGiB: null,
      acceleratorMemoryGiB: 0,
      updatedAt: null,
    });
    const response = await put({
      accelerators: [{ id: "nvidia-rtx-4090", count: 2 }, { id: "nvidia-rtx-3060" }],
      cpu: "amd-ryzen",
      systemMemoryGiB: 64,
      fromANewerClient: "ignored",
    });
    expect(response.status).toBe(200);
    const hardware = await readJson<Hardware>(response);
    expect(hardware).toMatchObject({
      accelerators: [
        { id: "nvidia-rtx-4090", name: "NVIDIA GeForce RTX 4090", kind: "gpu", count: 2, memoryGiB: 24 },
        { id: "nvidia-rtx-3060", kind: "gpu", count: 1, memoryGiB: 12 },
      ],
      cpu: { id: "amd-ryzen", name: "AMD Ryzen" },
      systemMemoryGiB: 64,
      acceleratorMemoryGiB: 60,
    });
    expect(await readJson<Hardware>(await hub.request("/api/me/hardware", { token: read }))).toEqual(
      hardware,
    );
    // A unified-memory chip: its memory is the system's unless told otherwise.
    const mac = await readJson<Hardware>(
      await put({ accelerators: [{ id: "apple-m3-max", memoryGiB: 36 }] }),
    );
    expect(mac).toMatchObject({ acceleratorMemoryGiB: 36, systemMemoryGiB: 36, cpu: null });
  });

  it("refuses every bad field with a 400 naming it", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "accelerators"],
      [{ accelerators: "nvidia-rtx-4090" }, "accelerators"],
      [{ accelerators: Array.from({ length: 9 }, () => ({ id: "nvidia-t4" })) }, "accelerators"],
      [{ accelerators: [{}] }, "accelerators.0.id"],
      [{ accelerators: [{ id: "Not An Id" }] }, "accelerators.0.id"],
      [{ accelerators: [{ id: "nvidia-rtx-9999" }] }, "accelerators.0.id"],
      [{ accelerators: [{ id: "nvidia-t4" }, { id: "nvidia-t4" }] }, "accelerators.1.id"],
      [{ accelerators: [{ id: "nvidia-t4", count: 0 }] }, "accelerators.0.count"],
      [{ accelerators: [{ id: "nvidia-t4", count: 17 }] }, "accelerators.0.count"],
      [{ accelerators: [{ id: "nvidia-t4", count: "2" }] }, "accelerators.0.count"],
      [{ accelerators: [{ id: "nvidia-t4", count: 1.5 }] }, "accelerators.0.count"],
      [{ accelerators: [{ id: "nvidia-t4", memoryGiB: 32 }] }, "accelerators.0.memoryGiB"],
      [{ accelerators: [{ id: "apple-m3-max" }] }, "accelerators.0.memoryGiB"],
      [{ accelerators: [{ id: "apple-m3-max", memoryGiB: 37 }] }, "accelerators.0.memoryGiB"],
      [{ accelerators: [{ id: "apple-m3-max", memoryGiB: -1 }] }, "accelerators.0.memoryGiB"],
      [{ accelerators: [{ id: "nvidia-t4", extra: 1 }] }, "accelerators.0.extra"],
      [{ accelerators: [], cpu: "pentium-4" }, "cpu"],
      [{ accelerators: [], cpu: 5 }, "cpu"],
      [{ accelerators: [], systemMemoryGiB: 0 }, "systemMemoryGiB"],
      [{ accelerators: [], systemMemoryGiB: -8 }, "systemMemoryGiB"],
      [{ accelerators: [], systemMemoryGiB: "64" }, "systemMemoryGiB"],
      [{ accelerators: [], systemMemoryGiB: 1e9 }, "systemMemoryGiB"],
    ];
    for (const [body, field] of cases) {
      const response = await put(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await readJson<ApiError>(response)).field, JSON.stringify(body)).toBe(field);
    }
    for (const body of [[], "x", null]) expect((await put(body)).status).toBe(400);
  });

  it("needs a session or a role token: read to view, write to change", async () => {
    expect((await hub.request("/api/me/hardware")).status).toBe(401);
    expect(
      (await hub.request("/api/me/hardware", { method: "PUT", json: { accelerators: [] } })).status,
    ).toBe(401);
    expect((await put({ accelerators: [] }, read)).status).toBe(403);
    for (const request of [
      hub.request("/api/me/hardware", { token: fineGrained }),
      put({ accelerators: [] }, fineGrained),
    ]) {
      const refused = await request;
      expect(refused.status).toBe(403);
      expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
    }
  });

  it("tells whether a model's safetensors weights fit the declared hardware", async () => {
    const weights = 50 * GiB;
    await put({ accelerators: [{ id: "nvidia-rtx-4090" }], systemMemoryGiB: 64 });
    expect(await fit("alice/big", write)).toMatchObject({
      repo: "alice/big",
      weightsBytes: weights,
      requiredBytes: Math.ceil(weights * 1.2),
      acceleratorMemoryBytes: 24 * GiB,
      systemMemoryBytes: 64 * GiB,
      verdict: "fits_with_offload",
    });
    await put({ accelerators: [{ id: "nvidia-h100-80gb" }] });
    expect((await fit("alice/big", write)).verdict).toBe("fits");
    await put({ accelerators: [{ id: "apple-m3-max", memoryGiB: 36 }] });
    expect((await fit("alice/big", write)).verdict).toBe("does_not_fit");
    await put({ accelerators: [{ id: "nvidia-rtx-4090", count: 2 }], systemMemoryGiB: 8 });
    expect((await fit("alice/big", write)).verdict).toBe("does_not_fit");
    expect(await fit("alice/empty", write)).toMatchObject({ weightsBytes: 0, verdict: "unknown" });
    const bob = await fit("alice/big", await hub.createToken("bob"));
    expect(bob).toMatchObject({ verdict: "unknown", acceleratorMemoryBytes: null });
    expect(bob.reason).toMatch(/PUT \/api\/me\/hardware/);
    expect((await fit("alice/big")).reason).toMatch(/Sign in/);
    expect(
      (await hub.request("/api/models/alice/nothing/hardware-compatibility", { token: write })).status,
    ).toBe(404);
  });

  it("documents the operations", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    expect(doc.paths["/api/me/hardware"]?.get?.operationId).toBe("account_hardware_get");
    const update = doc.paths["/api/me/hardware"]?.put;
    expect(update?.operationId).toBe("account_hardware_update");
    expect(JSON.stringify(update?.requestBody)).toContain("systemMemoryGiB");
    expect(JSON.stringify(update?.responses)).toContain("acceleratorMemoryGiB");
    expect(doc.paths["/api/models/{owner}/{name}/hardware-compatibility"]?.get?.operationId).toBe(
      "repo_hardware_compatibility",
    );
  });
});
