import { describe, expect, it } from "vitest";
import { readServerSentEvents } from "./sse.js";

const streamOf = (...pieces: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece));
      controller.close();
    },
  });

describe("readServerSentEvents", () => {
  it("joins events split anywhere across chunks, with any line ending, and drops an unfinished last one", async () => {
    const events = [];
    for await (const event of readServerSentEvents(
      streamOf(
        ': comment\n\ndata: {"a"',
        ":1}\r",
        "\n\r\nevent: error\ndata: one\ndata: two\n\n",
        "data: [DONE]",
      ),
    )) {
      events.push(event);
    }
    expect(events).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "error", data: "one\ntwo" },
    ]);
  });

  it("cancels the body when the reader stops early", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode("data: x\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of readServerSentEvents(body)) {
      expect(event.data).toBe("x");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
