import { readFileSync } from "node:fs";
import type { Hardware, HardwareCatalog, HardwareCompatibility, UpdateHardware } from "@hub/api";
import type { Db } from "../../../db/database.js";
import { badRequest } from "../../../errors.js";
import type { RepoFiles } from "../../../git/repo-files.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { hardwareRepository } from "./hardware.repository.js";

const GiB = 1024 ** 3;
/** Room for activations and the KV cache on top of the weights when running a model. */
const RUNTIME_OVERHEAD = 1.2;

/** The catalog the hub ships, next to this module (`hardware-catalog.json`). */
export function loadHardwareCatalog(): HardwareCatalog {
  return JSON.parse(
    readFileSync(new URL("./hardware-catalog.json", import.meta.url), "utf8"),
  ) as HardwareCatalog;
}

interface StoredAccelerator {
  id: string;
  count: number;
  memoryGiB: number;
}

/**
 * The local hardware accounts declare, checked against the shipped catalog,
 * and whether a model's weights fit it.
 */
export function createHardwareService({
  db,
  clock,
  catalog,
  storage,
  repoFiles,
}: {
  db: Db;
  clock: () => Date;
  catalog: HardwareCatalog;
  storage: RepoStorage;
  repoFiles: RepoFiles;
}) {
  const accelerators = new Map(catalog.accelerators.map((a) => [a.id, a]));
  const cpus = new Map(catalog.cpus.map((c) => [c.id, c]));

  function present(
    stored: StoredAccelerator[],
    cpu: string | null,
    systemMemoryGiB: number | null,
    updatedAt: string | null,
  ): Hardware {
    const items = stored.map((a) => {
      const known = accelerators.get(a.id);
      return {
        id: a.id,
        name: known?.name ?? a.id,
        kind: known?.kind ?? "gpu",
        count: a.count,
        memoryGiB: a.memoryGiB,
      };
    });
    const known = cpu ? cpus.get(cpu) : undefined;
    return {
      accelerators: items,
      cpu: cpu ? { id: cpu, name: known?.name ?? cpu } : null,
      systemMemoryGiB,
      acceleratorMemoryGiB: items.reduce((sum, a) => sum + a.count * a.memoryGiB, 0),
      updatedAt,
    };
  }

  async function declared(userId: string): Promise<Hardware> {
    const row = await hardwareRepository.find(db, userId);
    if (!row) return present([], null, null, null);
    const systemMemory = row.system_memory_gib === null ? null : Number(row.system_memory_gib);
    return present(
      JSON.parse(row.accelerators) as StoredAccelerator[],
      row.cpu,
      systemMemory,
      row.updated_at,
    );
  }

  return {
    catalog: () => catalog,
    declared,

    /** Replaces the declaration; every id must be in the catalog and unified-memory sizes among the chip's. */
    async update(userId: string, body: UpdateHardware): Promise<Hardware> {
      const stored: StoredAccelerator[] = body.accelerators.map((item, index) => {
        const field = `accelerators.${index}`;
        const known = accelerators.get(item.id);
        if (!known) {
          throw badRequest(
            "unknown_hardware",
            `"${item.id}" is not in the hardware catalog; pick an accelerator id from GET /api/hardware.`,
            `${field}.id`,
          );
        }
        if (body.accelerators.findIndex((other) => other.id === item.id) !== index) {
          throw badRequest(
            "duplicate_hardware",
            `"${item.id}" is listed twice; give its count instead.`,
            `${field}.id`,
          );
        }
        let memoryGiB = known.memoryGiB ?? 0;
        if (known.kind === "unified") {
          const options = known.memoryOptionsGiB ?? [];
          if (item.memoryGiB === undefined || !options.includes(item.memoryGiB)) {
            throw badRequest(
              "invalid_memory",
              `${known.name} comes with ${options.join(", ")} GiB; send memoryGiB as one of them.`,
              `${field}.memoryGiB`,
            );
          }
          memoryGiB = item.memoryGiB;
        } else if (item.memoryGiB !== undefined && item.memoryGiB !== known.memoryGiB) {
          throw badRequest(
            "invalid_memory",
            `${known.name} has ${known.memoryGiB} GiB; leave memoryGiB out for it.`,
            `${field}.memoryGiB`,
          );
        }
        return { id: item.id, count: item.count ?? 1, memoryGiB };
      });
      const cpu = body.cpu ?? null;
      if (cpu !== null && !cpus.has(cpu)) {
        throw badRequest(
          "unknown_hardware",
          `"${cpu}" is not in the hardware catalog; pick a CPU id from GET /api/hardware.`,
          "cpu",
        );
      }
      // A unified-memory chip's memory is the system's.
      const unified = stored.find((a) => accelerators.get(a.id)?.kind === "unified");
      const systemMemoryGiB = body.systemMemoryGiB ?? (unified ? unified.memoryGiB : null);
      const updatedAt = clock().toISOString();
      await hardwareRepository.save(db, {
        user_id: userId,
        accelerators: JSON.stringify(stored),
        cpu,
        system_memory_gib: systemMemoryGiB,
        updated_at: updatedAt,
      });
      return present(stored, cpu, systemMemoryGiB, updatedAt);
    },

    /**
     * Compares a repository's safetensors weights (plus 20% runtime overhead)
     * with the caller's declared memory: accelerators alone, then with system
     * memory for offloading. Unified memory counts once, as accelerator memory.
     */
    async compatibility(repo: FoundRepo, userId: string | null): Promise<HardwareCompatibility> {
      const commit = await storage.resolveRef(repo.row.id, repo.row.default_branch);
      const entries = commit ? ((await repoFiles.listTree(repo.row.id, commit, "", true)) ?? []) : [];
      const weightsBytes = entries
        .filter((e) => e.type === "file" && e.path.endsWith(".safetensors"))
        .reduce((sum, e) => sum + (e.lfs?.size ?? e.size), 0);
      const requiredBytes = Math.ceil(weightsBytes * RUNTIME_OVERHEAD);
      const hardware = userId ? await declared(userId) : null;
      const base = { repo: repo.fullName, revision: commit ?? "", weightsBytes, requiredBytes };
      if (!hardware || hardware.updatedAt === null) {
        return {
          ...base,
          acceleratorMemoryBytes: null,
          systemMemoryBytes: null,
          verdict: "unknown",
          reason: userId
            ? "Declare your hardware with PUT /api/me/hardware."
            : "Sign in to compare with your hardware.",
        };
      }
      const unified = hardware.accelerators.some((a) => a.kind === "unified");
      const acceleratorMemoryBytes = Math.round(hardware.acceleratorMemoryGiB * GiB);
      const systemMemoryBytes =
        hardware.systemMemoryGiB === null ? null : Math.round(hardware.systemMemoryGiB * GiB);
      const result = { ...base, acceleratorMemoryBytes, systemMemoryBytes };
      if (weightsBytes === 0)
        return {
          ...result,
          verdict: "unknown",
          reason: "The repository has no safetensors weights to measure.",
        };
      if (requiredBytes <= acceleratorMemoryBytes)
        return { ...result, verdict: "fits", reason: "The weights fit in accelerator memory." };
      const offload = acceleratorMemoryBytes + (unified ? 0 : (systemMemoryBytes ?? 0));
      if (requiredBytes <= offload)
        return {
          ...result,
          verdict: "fits_with_offload",
          reason: "The weights fit when part of them is offloaded to system memory.",
        };
      return { ...result, verdict: "does_not_fit", reason: "The weights need more memory than declared." };
    },
  };
}

export type HardwareService = ReturnType<typeof createHardwareService>;
