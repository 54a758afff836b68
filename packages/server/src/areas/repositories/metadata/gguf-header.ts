/**
 * What a GGUF file's header says of its model, as the Hugging Face Hub reports it in `gguf`: the parameters
 * (the tensors' element counts), the architecture, its context length, the chat template and the tokenizer's
 * BOS and EOS tokens. Read from the header only (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md):
 * magic, version (2 or 3), tensor and key counts, the key-value metadata, then the tensors' descriptions.
 */

export interface GgufFacts {
  total: number;
  architecture?: string;
  context_length?: number;
  chat_template?: string;
  bos_token?: string;
  eos_token?: string;
}

/** The bytes ran out before the header's end: read more of the file and try again. */
export class GgufTruncated extends Error {}

const MAGIC = 0x46554747; // "GGUF", little-endian
/** Bounds a header must keep, so a hostile file cannot make the parser allocate or loop without end. */
const MAX_TENSORS = 1_000_000;
const MAX_KEYS = 1_000_000;
const MAX_STRING_BYTES = 16 * 1024 * 1024;
const MAX_ARRAY_ITEMS = 10_000_000;

enum ValueType {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
}
const FIXED_SIZES: Partial<Record<ValueType, number>> = {
  [ValueType.Uint8]: 1,
  [ValueType.Int8]: 1,
  [ValueType.Bool]: 1,
  [ValueType.Uint16]: 2,
  [ValueType.Int16]: 2,
  [ValueType.Uint32]: 4,
  [ValueType.Int32]: 4,
  [ValueType.Float32]: 4,
  [ValueType.Uint64]: 8,
  [ValueType.Int64]: 8,
  [ValueType.Float64]: 8,
};

/** A cursor over the header's bytes that throws GgufTruncated at their end. */
class Reader {
  offset = 0;
  constructor(private readonly bytes: Buffer) {}

  private take(length: number): number {
    if (this.offset + length > this.bytes.length) throw new GgufTruncated();
    const at = this.offset;
    this.offset += length;
    return at;
  }
  u32 = () => this.bytes.readUInt32LE(this.take(4));
  u64(): number {
    const value = this.bytes.readBigUInt64LE(this.take(8));
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("A GGUF count is out of range.");
    return Number(value);
  }
  string(): string {
    const length = this.u64();
    if (length > MAX_STRING_BYTES) throw new Error("A GGUF string is too long.");
    const at = this.take(length);
    return this.bytes.toString("utf8", at, at + length);
  }
  skip(length: number) {
    this.take(length);
  }

  /** A scalar value of `type` (numbers as numbers, a bool as a boolean); an array is read by `value`. */
  scalar(type: ValueType): number | string | boolean {
    switch (type) {
      case ValueType.Uint8:
        return this.bytes.readUInt8(this.take(1));
      case ValueType.Int8:
        return this.bytes.readInt8(this.take(1));
      case ValueType.Bool:
        return this.bytes.readUInt8(this.take(1)) !== 0;
      case ValueType.Uint16:
        return this.bytes.readUInt16LE(this.take(2));
      case ValueType.Int16:
        return this.bytes.readInt16LE(this.take(2));
      case ValueType.Uint32:
        return this.u32();
      case ValueType.Int32:
        return this.bytes.readInt32LE(this.take(4));
      case ValueType.Float32:
        return this.bytes.readFloatLE(this.take(4));
      case ValueType.Uint64:
        return Number(this.bytes.readBigUInt64LE(this.take(8)));
      case ValueType.Int64:
        return Number(this.bytes.readBigInt64LE(this.take(8)));
      case ValueType.Float64:
        return this.bytes.readDoubleLE(this.take(8));
      case ValueType.String:
        return this.string();
      default:
        throw new Error(`Unknown GGUF value type ${type}.`);
    }
  }

  /** A value; an array's items are kept only when `keep` asks (else skipped), and only strings. */
  value(type: ValueType, keep: boolean): unknown {
    if (type !== ValueType.Array) return this.scalar(type);
    const itemType = this.u32() as ValueType;
    const count = this.u64();
    if (count > MAX_ARRAY_ITEMS) throw new Error("A GGUF array is too long.");
    const fixed = FIXED_SIZES[itemType];
    if (fixed !== undefined && !keep) {
      this.skip(fixed * count);
      return undefined;
    }
    const items: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const item = this.value(itemType, keep);
      if (keep) items.push(item);
    }
    return keep ? items : undefined;
  }
}

/**
 * The facts of a GGUF header held in `bytes` (the file's first bytes); throws GgufTruncated when the header
 * goes on past them, and an Error when the bytes are not a GGUF header.
 */
export function parseGgufHeader(bytes: Buffer): GgufFacts {
  const reader = new Reader(bytes);
  if (reader.u32() !== MAGIC) throw new Error("Not a GGUF file.");
  const version = reader.u32();
  if (version !== 2 && version !== 3) throw new Error(`GGUF version ${version} is not read.`);
  const tensorCount = reader.u64();
  const keyCount = reader.u64();
  if (tensorCount > MAX_TENSORS || keyCount > MAX_KEYS) throw new Error("A GGUF header is too large.");

  const values = new Map<string, unknown>();
  for (let i = 0; i < keyCount; i++) {
    const key = reader.string();
    const type = reader.u32() as ValueType;
    values.set(key, reader.value(type, key === "tokenizer.ggml.tokens"));
  }
  let total = 0;
  for (let i = 0; i < tensorCount; i++) {
    reader.string();
    const dimensions = reader.u32();
    if (dimensions > 8) throw new Error("A GGUF tensor has too many dimensions.");
    let elements = 1;
    for (let d = 0; d < dimensions; d++) elements *= reader.u64();
    reader.u32(); // type
    reader.u64(); // offset
    total += elements;
  }

  const facts: GgufFacts = { total };
  const text = (key: string) =>
    typeof values.get(key) === "string" ? (values.get(key) as string) : undefined;
  const architecture = text("general.architecture");
  if (architecture) {
    facts.architecture = architecture;
    const context = values.get(`${architecture}.context_length`);
    if (typeof context === "number") facts.context_length = context;
  }
  const template = text("tokenizer.chat_template");
  if (template !== undefined) facts.chat_template = template;
  const tokens = values.get("tokenizer.ggml.tokens");
  const token = (key: string) => {
    const id = values.get(key);
    return Array.isArray(tokens) && typeof id === "number" && typeof tokens[id] === "string"
      ? (tokens[id] as string)
      : undefined;
  };
  const bos = token("tokenizer.ggml.bos_token_id");
  if (bos !== undefined) facts.bos_token = bos;
  const eos = token("tokenizer.ggml.eos_token_id");
  if (eos !== undefined) facts.eos_token = eos;
  return facts;
}
