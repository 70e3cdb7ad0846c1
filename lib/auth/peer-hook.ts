import http from "node:http";
import https from "node:https";
import { FORWARDED_HEADER, PEER_HEADER } from "./client-address";

type Flag = { __slotkeeperPeerHook?: boolean };

/** Overwrite the headers only the hook may set, from the socket and the headers as they arrived. */
export function stampPeer(req: http.IncomingMessage): void {
  for (const name of Object.keys(req.headers)) if (name.startsWith("x-slotkeeper-")) delete req.headers[name];
  req.headers[PEER_HEADER] = req.socket?.remoteAddress ?? "";
  const xff = req.headers["x-forwarded-for"];
  if (xff !== undefined) req.headers[FORWARDED_HEADER] = Array.isArray(xff) ? xff.join(", ") : xff;
}

/**
 * Stamp every incoming request with its socket address before Next.js handles it. Called once
 * from instrumentation.ts, which Next runs before the server answers its first request; the
 * server already exists then, so the patch goes on the prototype, where `emit` is looked up.
 */
export function installPeerHook(): void {
  const g = globalThis as Flag;
  if (g.__slotkeeperPeerHook) return;
  for (const proto of [http.Server.prototype, https.Server.prototype] as { emit: (event: string | symbol, ...args: unknown[]) => boolean }[]) {
    const original = proto.emit;
    proto.emit = function emit(this: unknown, event: string | symbol, ...args: unknown[]) {
      if (event === "request") stampPeer(args[0] as http.IncomingMessage);
      return original.call(this, event, ...args);
    };
  }
  g.__slotkeeperPeerHook = true;
}
