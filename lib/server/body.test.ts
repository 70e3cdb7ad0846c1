// The one body reader every route uses: it stops pulling from the stream as soon as the limit is
// passed (counted by the stream below, not by the reader), and trusts a Content-Length that already says too much.
import { describe, expect, it } from "vitest";
import { readBodyText, readJson } from "./route";

/** A request whose body is `chunks` chunks of `size` bytes, produced only when pulled; `pulled()` counts them. */
function streamingRequest(chunks: number, size: number, headers: Record<string, string> = {}) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close();
      pulled++;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  }, { highWaterMark: 0 }); // pull only when read, so `pulled` counts what the reader asked for
  const req = new Request("http://localhost/api/x", { method: "POST", body, headers: { "content-type": "application/json", ...headers }, duplex: "half" } as RequestInit);
  return { req, pulled: () => pulled };
}

describe("readBodyText", () => {
  it("refuses with 413 after the first chunk past the limit, leaving the rest unread", async () => {
    const { req, pulled } = streamingRequest(1000, 16 * 1024);
    await expect(readBodyText(req, 64 * 1024)).rejects.toMatchObject({ kind: "too_large", status: 413, field: "body" });
    // 64 KiB is four chunks; the fifth crosses the limit, and nothing after it is asked for.
    expect(pulled()).toBe(5);
  });

  it("refuses a declared Content-Length over the limit without reading at all", async () => {
    const { req, pulled } = streamingRequest(10, 1024, { "content-length": String(10 * 1024) });
    await expect(readJson(req, 4096)).rejects.toMatchObject({ kind: "too_large" });
    expect(pulled()).toBe(0);
  });

  it("reads a body at the limit whole", async () => {
    const { req } = streamingRequest(4, 1024);
    expect((await readBodyText(req, 4096)).length).toBe(4096);
  });
});
