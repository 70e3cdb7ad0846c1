// The outbound address policy against real sockets: receivers on 127.0.0.1 record every request
// and connection that reaches them, and the assertions read those records (not the policy's own
// verdicts). Name resolution is injected where a test needs a name to resolve to a chosen address
// (there is no DNS server here to change); `localhost` goes through the system resolver, and so does
// a name mapped to a private address by a hosts file of the test's own, in a child process with
// namespaces of its own (the last describe).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import { OUTBOUND_MARKER } from "../auth/client-address";
import { isNonRetryable } from "../handlers/types";
import { sendToChannel } from "../alerts/send";
import { sampleMessage } from "../alerts/message";
import { parseSmtpUrl } from "../alerts/smtp";
import { httpHandler } from "../../worker/handlers/http";
import { OutboundRefusedError, outboundUrlWarning, parseOutboundAllow, refusedRange, systemResolver, type OutboundPolicy, type Resolver } from "./outbound";
import { outboundRequest } from "./outbound-request";

type Seen = { url: string; headers: http.IncomingHttpHeaders };

/** An HTTP server on 127.0.0.1 that records what reaches it and answers with `answer`. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, s) => s.end("ok")) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { seen, port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let target: Awaited<ReturnType<typeof receiver>>;
const servers: { close: () => Promise<void> }[] = [];
const policy = (allow = "", resolve: Resolver = systemResolver): OutboundPolicy => ({ allow: parseOutboundAllow(allow), resolve });
const fixed = (address: string): Resolver => async () => [{ address, family: address.includes(":") ? 6 : 4 }];

beforeAll(async () => {
  target = await receiver();
});
afterEach(() => {
  target.seen.length = 0;
});
afterAll(async () => {
  await target.close();
  for (const s of servers) await s.close();
});

async function refused(url: string, p: OutboundPolicy): Promise<OutboundRefusedError> {
  const err = await outboundRequest(url, { sender: "test", policy: p }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, url).toBeInstanceOf(OutboundRefusedError);
  expect(isNonRetryable(err)).toBe(true);
  expect((err as Error).message).toContain("outbound address policy");
  expect((err as Error).message).toContain("SLOTKEEPER_OUTBOUND_ALLOW");
  return err as OutboundRefusedError;
}

describe("the default policy", () => {
  it("refuses every non-public range, in every spelling the URL parser accepts, and lets public unicast through", () => {
    const host = (u: string) => new URL(u).hostname;
    const cases: [string, RegExp][] = [
      ["http://127.0.0.1/", /loopback/],
      ["http://127.8.9.10/", /loopback/],
      ["http://2130706433/", /loopback/],
      ["http://0x7f.1/", /loopback/],
      ["http://017700000001/", /loopback/],
      ["http://127.1/", /loopback/],
      ["http://[::1]/", /loopback/],
      ["http://[::ffff:127.0.0.1]/", /loopback/],
      ["http://[0:0:0:0:0:ffff:7f00:1]/", /loopback/],
      ["http://[64:ff9b::127.0.0.1]/", /loopback/],
      ["http://[2002:7f00:1::]/", /loopback/],
      ["http://[::127.0.0.1]/", /IPv4-compatible/],
      ["http://10.1.2.3/", /private/],
      ["http://172.16.0.1/", /private/],
      ["http://172.31.255.255/", /private/],
      ["http://192.168.1.1/", /private/],
      ["http://[::ffff:192.168.1.1]/", /private/],
      ["http://[fd00::1]/", /unique-local/],
      ["http://[fc00::1]/", /unique-local/],
      ["http://[fd00:ec2::254]/", /unique-local/],
      ["http://169.254.169.254/", /link-local/],
      ["http://[fe80::1]/", /link-local/],
      ["http://100.64.0.1/", /carrier-grade NAT/],
      ["http://100.100.100.200/", /metadata/],
      ["http://168.63.129.16/", /metadata/],
      ["http://224.0.0.1/", /multicast/],
      ["http://[ff02::1]/", /multicast/],
      ["http://0.0.0.0/", /unspecified/],
      ["http://0/", /unspecified/],
      ["http://[::]/", /unspecified/],
      ["http://255.255.255.255/", /broadcast/],
      ["http://240.0.0.1/", /reserved/],
      ["http://192.0.2.1/", /reserved/],
    ];
    for (const [url, why] of cases) expect(refusedRange(host(url)), url).toMatch(why);
    for (const url of ["http://93.184.215.14/", "http://8.8.8.8/", "http://[2606:4700:4700::1111]/", "http://[::ffff:8.8.8.8]/", "http://[64:ff9b::8.8.8.8]/", "http://172.32.0.1/"]) {
      expect(refusedRange(host(url)), url).toBeNull();
    }
  });

  it("reads SLOTKEEPER_OUTBOUND_ALLOW, and a bad entry stops the process naming the variable and the entry", () => {
    const entries = parseOutboundAllow(" 10.0.0.0/8, billing.internal ,*.corp.example,127.1,::1,[fd00::]/8,::ffff:192.168.0.0/112,");
    expect(entries.map((e) => e.kind)).toEqual(["range", "host", "suffix", "range", "range", "range", "range"]);
    expect(loadConfig({ SLOTKEEPER_OUTBOUND_ALLOW: "10.0.0.0/8,billing.internal" }).outboundAllow).toHaveLength(2);
    expect(loadConfig({}).outboundAllow).toEqual([]);
    for (const bad of ["10.0.0.0/33", "billing.internal:8080", "http://x", "a b", "*.", "10.0.0.0/8,exa mple"]) {
      expect(() => loadConfig({ SLOTKEEPER_OUTBOUND_ALLOW: bad }), bad).toThrow(/invalid SLOTKEEPER_OUTBOUND_ALLOW: entry "/);
    }
  });

  it("opens exactly what is listed, comparing addresses by what they reach", async () => {
    const p = policy("127.0.0.1,10.0.0.0/8,billing.internal,*.corp.example");
    const { checkAddress } = await import("./outbound");
    expect(checkAddress(p, "127.0.0.1", "127.0.0.1")).toBeNull();
    expect(checkAddress(p, "[::ffff:7f00:1]", "::ffff:7f00:1")).toBeNull();
    expect(checkAddress(p, "127.0.0.2", "127.0.0.2")).toBeInstanceOf(OutboundRefusedError);
    expect(checkAddress(p, "[::1]", "::1")).toBeInstanceOf(OutboundRefusedError);
    expect(checkAddress(p, "[::ffff:a01:203]", "::ffff:a01:203")).toBeNull();
    expect(checkAddress(p, "billing.internal", "192.168.7.7")).toBeNull();
    expect(checkAddress(p, "a.b.corp.example", "192.168.7.7")).toBeNull();
    expect(checkAddress(p, "corp.example.evil", "192.168.7.7")).toBeInstanceOf(OutboundRefusedError);
    expect(checkAddress(p, "192.168.7.7", "192.168.7.7")?.message).toMatch(/192\.168\.7\.7 is a private address.*SLOTKEEPER_OUTBOUND_ALLOW=192\.168\.7\.7/);
  });
});

describe("requests under the policy (real sockets)", () => {
  it("never reaches a receiver on 127.0.0.1, by any spelling of its address or a name that resolves to it", async () => {
    const p = target.port;
    for (const url of [`http://127.0.0.1:${p}/`, `http://[::ffff:127.0.0.1]:${p}/`, `http://2130706433:${p}/`, `http://0x7f.1:${p}/`, `http://127.1:${p}/`, `http://localhost:${p}/`, `http://0.0.0.0:${p}/`]) {
      await refused(url, policy());
    }
    const err = await refused(`http://billing.test:${p}/x`, policy("", fixed("10.20.30.40")));
    expect(err.message).toContain("billing.test (10.20.30.40) is a private address");
    await refused(`http://billing.test:${p}/x`, policy("", fixed("127.0.0.1")));
    await refused(`http://billing.test:${p}/x`, policy("", fixed("::ffff:127.0.0.1")));
    expect(target.seen).toEqual([]);
  });

  it("checks the address it connects to, not an earlier answer: a name that rebinds to loopback is refused", async () => {
    let calls = 0;
    const rebinding: Resolver = async () => [{ address: calls++ === 0 ? "93.184.215.14" : "127.0.0.1", family: 4 }];
    const p = policy("", rebinding);
    // The console's check (first answer: public) finds nothing to warn about...
    expect(await outboundUrlWarning(`http://rebind.test:${target.port}/`, p)).toBeNull();
    // ...and the request itself, resolving again, is refused before any byte is sent.
    await refused(`http://rebind.test:${target.port}/`, p);
    expect(calls).toBe(2);
    expect(target.seen).toEqual([]);
  });

  it("checks every redirect hop: an allowed server that redirects to loopback gets no further", async () => {
    const locations = [`http://127.0.0.1:${target.port}/stolen`, `http://[::ffff:127.0.0.1]:${target.port}/stolen`, `http://localhost:${target.port}/stolen`];
    for (const location of locations) {
      const redirector = await receiver((_q, s) => s.writeHead(302, { location }).end());
      servers.push(redirector);
      // The redirector is opened by name (it resolves to 127.0.0.1 here); its target is not.
      const p = policy("redirector.test", fixed("127.0.0.1"));
      const err = await refused(`http://redirector.test:${redirector.port}/start`, p);
      expect(err.message).toMatch(/loopback/);
      expect(redirector.seen.map((s) => s.url)).toEqual(["/start"]);
    }
    expect(target.seen).toEqual([]);
  });

  it("follows allowed redirects, and marks every request so the console never takes it for the local operator", async () => {
    const redirector = await receiver((_q, s) => s.writeHead(307, { location: `http://127.0.0.1:${target.port}/landed` }).end());
    servers.push(redirector);
    const res = await outboundRequest(`http://127.0.0.1:${redirector.port}/start`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json", "Slotkeeper-Outbound": "", "SLOTKEEPER-OUTBOUND": "nothing" },
      sender: "test",
      policy: policy("127.0.0.1"),
    });
    expect(res.status).toBe(200);
    expect(redirector.seen[0].headers[OUTBOUND_MARKER]).toBe("test");
    expect(target.seen.map((s) => [s.url, s.headers[OUTBOUND_MARKER]])).toEqual([["/landed", "test"]]);
  });
});

describe("the product's outbound callers", () => {
  const saved = process.env.SLOTKEEPER_OUTBOUND_ALLOW;
  afterEach(() => {
    if (saved === undefined) delete process.env.SLOTKEEPER_OUTBOUND_ALLOW;
    else process.env.SLOTKEEPER_OUTBOUND_ALLOW = saved;
  });

  const ctx = (url: string) => ({
    schedule: { id: 1, name: "self" },
    slot: new Date("2030-01-01T00:00:00Z"),
    idempotencyKey: "sk:1:2030-01-01T00:00:00.000Z",
    fencingToken: 1,
    attempt: 1,
    runId: 1,
    origin: "schedule" as const,
    payload: { url, method: "POST", headers: { "slotkeeper-outbound": "" } },
    signal: new AbortController().signal,
    log: { info() {}, warn() {}, error() {}, debug() {} } as never,
    workerId: "w",
  });

  it("the http handler fails a refused call as non-retryable, naming the policy; allowed, it arrives marked", async () => {
    delete process.env.SLOTKEEPER_OUTBOUND_ALLOW;
    const err = await Promise.resolve(httpHandler.run(ctx(`http://127.0.0.1:${target.port}/api/schedules/other/pause`))).catch((e: unknown) => e);
    expect(isNonRetryable(err)).toBe(true);
    expect((err as Error).message).toMatch(/outbound address policy: 127\.0\.0\.1 is a loopback address.*SLOTKEEPER_OUTBOUND_ALLOW/);
    expect(target.seen).toEqual([]);

    process.env.SLOTKEEPER_OUTBOUND_ALLOW = "127.0.0.1";
    await httpHandler.run(ctx(`http://127.0.0.1:${target.port}/hook`));
    expect(target.seen.map((s) => [s.url, s.headers[OUTBOUND_MARKER]])).toEqual([["/hook", "http-handler"]]);
  });

  it("webhook and e-mail channels are refused the same way, and the SMTP server sees no connection", async () => {
    delete process.env.SLOTKEEPER_OUTBOUND_ALLOW;
    const message = sampleMessage("http://console.test", new Date("2030-01-01T00:00:00Z"));
    const hook = await sendToChannel({ kind: "webhook", config: { url: `http://127.0.0.1:${target.port}/hook` } }, message, { smtp: null, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect((hook as Error).message).toMatch(/outbound address policy.*SLOTKEEPER_OUTBOUND_ALLOW/);
    const slack = await sendToChannel({ kind: "slack", config: { url: `http://[::ffff:127.0.0.1]:${target.port}/hook` } }, message, { smtp: null, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect((slack as Error).message).toMatch(/outbound address policy/);
    expect(target.seen).toEqual([]);

    let connections = 0;
    const smtpServer = net.createServer((s) => {
      connections++;
      s.end("421 test\r\n");
    });
    await new Promise<void>((r) => smtpServer.listen(0, "127.0.0.1", r));
    const smtp = parseSmtpUrl(`smtp://localhost:${(smtpServer.address() as AddressInfo).port}`, "a@b.test");
    const mail = await sendToChannel({ kind: "email", config: { to: ["x@y.test"] } }, message, { smtp, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect((mail as Error).message).toMatch(/outbound address policy: localhost \((127\.0\.0\.1|::1)\) is a loopback address/);
    expect(connections).toBe(0);
    await new Promise<void>((r) => smtpServer.close(() => r()));
  });
});

// With no resolver injected: the product's default policy resolves through getaddrinfo, which reads
// /etc/hosts. A child process gets a mount and a network namespace of its own (`unshare`, needs
// root; CI and this machine run as root, and without it this test fails saying so): there this
// test's hosts file is bind-mounted over /etc/hosts and 10.77.0.1 is an address of the child's own
// loopback, with a receiver on it. The machine's /etc/hosts and interfaces are never touched; both
// changes end with the child.
describe("a name the system resolver maps to a private address", () => {
  it("is refused before any request reaches the receiver at that address; opened on purpose, the same request arrives", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-outbound-hosts-"));
    try {
      const hosts = path.join(dir, "hosts");
      fs.writeFileSync(hosts, "127.0.0.1 localhost\n10.77.0.1 billing-db.internal\n");
      // The child prints what the product's request answered under each policy and what the receiver saw.
      const script = `
        const http = require("node:http");
        const { outboundRequest } = require("./lib/security/outbound-request.ts");
        const { isNonRetryable } = require("./lib/handlers/types.ts");
        const seen = [];
        const server = http.createServer((req, res) => { seen.push(req.url); res.end("ok"); });
        server.listen(0, "10.77.0.1", async () => {
          const url = "http://billing-db.internal:" + server.address().port;
          const attempt = (p) => outboundRequest(url + p, { sender: "test" }).then((r) => ({ status: r.status }), (e) => ({ error: e.message, nonRetryable: isNonRetryable(e) }));
          delete process.env.SLOTKEEPER_OUTBOUND_ALLOW;
          const refused = await attempt("/refused");
          process.env.SLOTKEEPER_OUTBOUND_ALLOW = "10.77.0.0/16";
          const allowed = await attempt("/allowed");
          server.close();
          console.log(JSON.stringify({ resolved: await require("node:dns").promises.lookup("billing-db.internal", { all: true }), refused, allowed, seen }));
        });`;
      const setup = 'mount --bind "$1" /etc/hosts && ip link set lo up && ip addr add 10.77.0.1/32 dev lo && exec "$2" --import tsx -e "$3"';
      const r = spawnSync("unshare", ["--mount", "--net", "sh", "-c", setup, "sh", hosts, process.execPath, script], { encoding: "utf8", timeout: 30_000 });
      if (r.error || r.status !== 0) throw new Error(`the child with its own /etc/hosts and network (unshare --mount --net, needs root) failed: ${r.error?.message ?? r.stderr}`);
      const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { resolved: unknown; refused: { error?: string; nonRetryable?: boolean }; allowed: { status?: number }; seen: string[] };
      expect(out.resolved).toEqual([{ address: "10.77.0.1", family: 4 }]);
      expect(out.refused.error).toMatch(/^outbound address policy: billing-db\.internal \(10\.77\.0\.1\) is a private address.*SLOTKEEPER_OUTBOUND_ALLOW=billing-db\.internal/);
      expect(out.refused.nonRetryable).toBe(true);
      expect(out.allowed).toEqual({ status: 200 });
      expect(out.seen).toEqual(["/allowed"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
