/** A value of a GGUF header's metadata, with its type (the GGUF type codes). */
export type GgufValue =
  { u32: number } | { f32: number } | { string: string } | { strings: string[] } | { f32s: number[] };

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
};
const u64 = (value: number) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
};
const text = (value: string) => {
  const bytes = Buffer.from(value, "utf8");
  return Buffer.concat([u64(bytes.length), bytes]);
};
const f32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeFloatLE(value);
  return bytes;
};

function encode(value: GgufValue): Buffer {
  if ("u32" in value) return Buffer.concat([u32(4), u32(value.u32)]);
  if ("f32" in value) return Buffer.concat([u32(6), f32(value.f32)]);
  if ("string" in value) return Buffer.concat([u32(8), text(value.string)]);
  if ("strings" in value)
    return Buffer.concat([u32(9), u32(8), u64(value.strings.length), ...value.strings.map(text)]);
  return Buffer.concat([u32(9), u32(6), u64(value.f32s.length), ...value.f32s.map(f32)]);
}

/**
 * A GGUF file (version 3): the header with `metadata` and the tensors' descriptions, then `dataBytes` zero
 * bytes standing for the tensors' data, for tests of what the hub reads from a header.
 */
export function ggufFile(
  metadata: Record<string, GgufValue>,
  tensors: Record<string, number[]>,
  dataBytes = 64,
): Buffer {
  const parts: Buffer[] = [
    Buffer.from("GGUF", "latin1"),
    u32(3),
    u64(Object.keys(tensors).length),
    u64(Object.keys(metadata).length),
  ];
  for (const [key, value] of Object.entries(metadata)) parts.push(text(key), encode(value));
  let offset = 0;
  for (const [name, dims] of Object.entries(tensors)) {
    parts.push(text(name), u32(dims.length), ...dims.map(u64), u32(0), u64(offset));
    offset += dims.reduce((a, b) => a * b, 1) * 4;
  }
  return Buffer.concat([...parts, Buffer.alloc(dataBytes)]);
}
