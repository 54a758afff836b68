import { Type, type Static } from "@sinclair/typebox";

const CatalogId = Type.String({
  pattern: "^[a-z0-9][a-z0-9-]{0,63}$",
  description: "An id from GET /api/hardware.",
});

/** One accelerator model the hub knows: a GPU with its memory, or a unified-memory chip with the sizes it comes in. */
export const HardwareAccelerator = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    vendor: Type.String(),
    kind: Type.Union([Type.Literal("gpu"), Type.Literal("unified")], {
      description: "`gpu`: its own memory; `unified`: memory shared with the system (Apple silicon).",
    }),
    memoryGiB: Type.Optional(Type.Number({ description: "Memory of one GPU." })),
    memoryOptionsGiB: Type.Optional(
      Type.Array(Type.Number(), { description: "The memory sizes a unified-memory chip is sold with." }),
    ),
  },
  { title: "HardwareAccelerator" },
);
export type HardwareAccelerator = Static<typeof HardwareAccelerator>;

/** `GET /api/hardware`: the catalog the hub ships, which declarations are checked against. */
export const HardwareCatalog = Type.Object(
  {
    version: Type.Integer(),
    accelerators: Type.Array(HardwareAccelerator),
    cpus: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), vendor: Type.String() })),
  },
  { title: "HardwareCatalog" },
);
export type HardwareCatalog = Static<typeof HardwareCatalog>;

/** `PUT /api/me/hardware`: the whole declaration; open (F). */
export const UpdateHardware = Type.Object(
  {
    accelerators: Type.Array(
      Type.Object(
        {
          id: CatalogId,
          count: Type.Optional(Type.Integer({ minimum: 1, maximum: 16, default: 1 })),
          memoryGiB: Type.Optional(
            Type.Number({
              exclusiveMinimum: 0,
              maximum: 4096,
              description: "For unified-memory chips: one of the catalog's `memoryOptionsGiB`; not for GPUs.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { maxItems: 8, description: "GPUs or chips in the machine; empty for none." },
    ),
    cpu: Type.Optional(Type.Union([CatalogId, Type.Null()])),
    systemMemoryGiB: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 65536 }), Type.Null()], {
        description: "System RAM; for unified-memory chips it is the chip's memory and may be left out.",
      }),
    ),
  },
  { title: "UpdateHardware", additionalProperties: true },
);
export type UpdateHardware = Static<typeof UpdateHardware>;

/** The declared hardware, resolved against the catalog, with its totals. */
export const Hardware = Type.Object(
  {
    accelerators: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        kind: Type.String(),
        count: Type.Integer(),
        memoryGiB: Type.Number({ description: "Memory of one." }),
      }),
    ),
    cpu: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
    systemMemoryGiB: Type.Union([Type.Number(), Type.Null()]),
    acceleratorMemoryGiB: Type.Number({ description: "All accelerators' memory together." }),
    updatedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "Null until the hardware is declared.",
    }),
  },
  { title: "Hardware" },
);
export type Hardware = Static<typeof Hardware>;

/** Whether a model's weights fit the caller's declared hardware. */
export const HardwareCompatibility = Type.Object(
  {
    repo: Type.String(),
    revision: Type.String({ description: "The commit looked at." }),
    weightsBytes: Type.Integer({ description: "Total size of the repository's `*.safetensors` files." }),
    requiredBytes: Type.Integer({ description: "Weights plus 20% for activations and cache." }),
    acceleratorMemoryBytes: Type.Union([Type.Integer(), Type.Null()]),
    systemMemoryBytes: Type.Union([Type.Integer(), Type.Null()]),
    verdict: Type.Union(
      ["fits", "fits_with_offload", "does_not_fit", "unknown"].map((v) => Type.Literal(v)),
      {
        description:
          "`fits` in accelerator memory; `fits_with_offload` in accelerator and system memory together; `unknown` without declared hardware or safetensors weights.",
      },
    ),
    reason: Type.String(),
  },
  { title: "HardwareCompatibility" },
);
export type HardwareCompatibility = Static<typeof HardwareCompatibility>;
