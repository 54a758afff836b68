// Loaded into the Portkey gateway (node --import) by the Router benchmark. Portkey 1.15.2 on Node appends its
// x-portkey-* headers to the upstream's fetch Response, whose headers are immutable, so every streamed
// request fails with "TypeError: immutable" (Portkey-AI/gateway#1389, #1550). This does what its own
// proposed fix (#1551) does: a streamed upstream Response is re-made with mutable headers, its body
// untouched. Non-streamed answers pass through as they are.
const fetch = globalThis.fetch;
const { Headers, Response } = globalThis;
globalThis.fetch = async (...args) => {
  const res = await fetch(...args);
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
  return new Response(res.body, {
    status: res.status,
    statusText: res.statusText,
    headers: new Headers(res.headers),
  });
};
