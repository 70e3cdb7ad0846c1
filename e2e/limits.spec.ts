// Request bodies over the limit are refused with 413 while they are still arriving: the client
// below streams a 64 MiB body in 64 KiB chunks and records how much it had sent when the answer
// came. A server that buffered the body first would answer only after all of it.
import http from "node:http";
import { expect, stackInfo, test } from "./fixtures";
import { startConsole } from "./stack";

const CHUNK = Buffer.alloc(64 * 1024, "a");
const TOTAL = 64 * 1024 * 1024;

type Outcome = { status: number; sentWhenAnswered: number; body: string };

/** POST a chunked body of TOTAL bytes, written as fast as the socket takes it, until the server answers. */
function streamPost(url: string, headers: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      answered = true;
      const sentWhenAnswered = sent;
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, sentWhenAnswered, body });
      });
    });
    req.on("error", (err) => (answered ? undefined : reject(err)));
    req.write("[");
    const pump = () => {
      while (!answered && sent < TOTAL) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once("drain", pump);
      }
      if (!answered) req.end("]");
    };
    pump();
  });
}

test("an oversized body is refused with 413 long before it has all arrived, on every route (sign-in included)", async () => {
  test.setTimeout(120_000);
  const { baseURL, databaseUrl } = stackInfo();
  const created = await streamPost(`${baseURL}/api/schedules`, { origin: baseURL });
  expect(created.status).toBe(413);
  expect(created.body).toContain("larger than");
  expect(created.sentWhenAnswered).toBeLessThan(TOTAL / 4);

  // Declared too large: refused before a byte of it is read.
  const declared = await fetch(`${baseURL}/api/schedules/x/backfill`, { method: "POST", headers: { "content-type": "application/json", "content-length": String(2 * 1024 * 1024) }, body: "x".repeat(2 * 1024 * 1024) });
  expect(declared.status).toBe(413);

  const secured = await startConsole({ databaseUrl, env: { SLOTKEEPER_OPERATOR_PASSWORD: "limits-operator-password" } });
  try {
    const login = await streamPost(`${secured.url}/api/auth/login`, { origin: secured.url });
    expect(login.status).toBe(413);
    expect(login.sentWhenAnswered).toBeLessThan(TOTAL / 4);
    // The console still answers afterwards.
    expect((await fetch(`${secured.url}/api/health`)).status).toBe(200);
  } finally {
    await secured.stop();
  }
});
