import { describe, expect, it } from "vitest";
import { ggufFile } from "../../../test-support/gguf.js";
import { GgufTruncated, parseGgufHeader } from "./gguf-header.js";

const llama = () =>
  ggufFile(
    {
      "general.architecture": { string: "llama" },
      "general.name": { string: "tiny" },
      "llama.context_length": { u32: 4096 },
      "llama.rope.freq_base": { f32: 10000 },
      "tokenizer.ggml.tokens": { strings: ["<unk>", "<s>", "</s>", "hello"] },
      "tokenizer.ggml.scores": { f32s: [0, 0, 0, -1.5] },
      "tokenizer.ggml.merges": { strings: ["h e", "l l"] },
      "tokenizer.ggml.bos_token_id": { u32: 1 },
      "tokenizer.ggml.eos_token_id": { u32: 2 },
      "tokenizer.chat_template": { string: "{% for m in messages %}{{ m.content }}{% endfor %}" },
    },
    { "token_embd.weight": [4, 8], "output_norm.weight": [8], "blk.0.attn_q.weight": [8, 8] },
  );

describe("a GGUF file's header", () => {
  it("gives the parameters, architecture, context length, chat template and BOS and EOS tokens", () => {
    expect(parseGgufHeader(llama())).toEqual({
      total: 32 + 8 + 64,
      architecture: "llama",
      context_length: 4096,
      chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}",
      bos_token: "<s>",
      eos_token: "</s>",
    });
  });

  it("asks for more bytes when the header runs past those it was given, at every cut", () => {
    const file = llama();
    const headerEnd = file.length - 64;
    for (let cut = 0; cut < headerEnd; cut += 7) {
      expect(() => parseGgufHeader(file.subarray(0, cut)), `cut at ${cut}`).toThrow(GgufTruncated);
    }
    expect(parseGgufHeader(file.subarray(0, headerEnd)).total).toBe(104);
  });

  it("leaves out what the header does not hold", () => {
    expect(parseGgufHeader(ggufFile({}, { w: [3, 5] }))).toEqual({ total: 15 });
    // A token id past the vocabulary names no token.
    expect(
      parseGgufHeader(
        ggufFile(
          { "tokenizer.ggml.tokens": { strings: ["a"] }, "tokenizer.ggml.bos_token_id": { u32: 9 } },
          {},
        ),
      ),
    ).toEqual({ total: 0 });
  });

  it("refuses bytes that are not a GGUF header, or one too large to read", () => {
    expect(() => parseGgufHeader(Buffer.from("GGUF not really, just text"))).toThrow(/version/);
    expect(() => parseGgufHeader(Buffer.from("PK\x03\x04 a zip file"))).toThrow(/Not a GGUF file/);
    const huge = llama();
    huge.writeBigUInt64LE(10n ** 12n, 8); // tensor count
    expect(() => parseGgufHeader(huge)).toThrow(/too large/);
    const version1 = llama();
    version1.writeUInt32LE(1, 4);
    expect(() => parseGgufHeader(version1)).toThrow(/version 1/);
  });
});
