/**
 * A minimal SMTP client over node:net / node:tls, enough to send a plain-text alert: EHLO,
 * STARTTLS when the server offers it (smtp://) or TLS from the start (smtps://), AUTH PLAIN or
 * LOGIN when credentials are given, MAIL FROM, RCPT TO, DATA, QUIT. No dependency: alert e-mail
 * is a few lines of text, and one less package is one less thing to keep patched.
 */
import net from "node:net";
import tls from "node:tls";
import { allowedAddresses, bareHost, getOutboundPolicy, type OutboundPolicy } from "../security/outbound";

export type SmtpConfig = { host: string; port: number; secure: boolean; user?: string; password?: string; from: string };

/** Parse `smtp://user:pass@host:587` or `smtps://host:465` plus a sender address. */
export function parseSmtpUrl(url: string, from: string): SmtpConfig {
  const u = new URL(url);
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error(`SMTP URL must start with smtp:// or smtps://, got ${u.protocol}`);
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    user: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    from,
  };
}

export type Mail = { to: string[]; subject: string; text: string };

/** A socket wrapper that reads whole SMTP replies (multi-line "250-…" up to "250 …"). */
class Conversation {
  private buffer = "";
  private waiting: ((reply: { code: number; lines: string[] }) => void) | null = null;
  private failed: Error | null = null;
  private onError: ((err: Error) => void) | null = null;

  constructor(public socket: net.Socket) {
    this.attach(socket);
  }

  attach(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      this.drain();
    });
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new Error("SMTP connection closed")));
  }

  private fail(err: Error) {
    this.failed ??= err;
    this.onError?.(err);
  }

  private drain() {
    if (!this.waiting) return;
    const lines = this.buffer.split("\r\n");
    for (let i = 0; i < lines.length - 1; i++) {
      if (/^\d{3} /.test(lines[i]) || /^\d{3}$/.test(lines[i])) {
        const reply = lines.slice(0, i + 1);
        this.buffer = lines.slice(i + 1).join("\r\n");
        const done = this.waiting;
        this.waiting = null;
        this.onError = null;
        done({ code: Number(lines[i].slice(0, 3)), lines: reply.map((l) => l.slice(4)) });
        return;
      }
    }
  }

  read(): Promise<{ code: number; lines: string[] }> {
    return new Promise((resolve, reject) => {
      if (this.failed) return reject(this.failed);
      this.waiting = resolve;
      this.onError = reject;
      this.drain();
    });
  }

  /** Send one command and expect one of the reply codes. */
  async command(line: string | null, expect: number[], shown = line): Promise<string[]> {
    if (line !== null) this.socket.write(`${line}\r\n`);
    const reply = await this.read();
    if (!expect.includes(reply.code)) throw new Error(`SMTP ${shown ?? "greeting"}: ${reply.code} ${reply.lines.join(" ")}`.trim());
    return reply.lines;
  }
}

/**
 * Connect under the outbound address policy: the SMTP host is resolved once through the policy
 * and the socket goes to that checked address (TLS still verifies the certificate for the name).
 */
async function connect(cfg: SmtpConfig, policy: OutboundPolicy): Promise<net.Socket> {
  const [{ address }] = await allowedAddresses(policy, cfg.host);
  return new Promise((resolve, reject) => {
    const servername = net.isIP(bareHost(cfg.host)) ? undefined : cfg.host;
    const socket = cfg.secure
      ? tls.connect({ host: address, port: cfg.port, servername }, () => resolve(socket))
      : net.connect({ host: address, port: cfg.port }, () => resolve(socket));
    socket.once("error", reject);
  });
}

function upgrade(socket: net.Socket, host: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    socket.removeAllListeners("data");
    socket.removeAllListeners("close");
    socket.removeAllListeners("error");
    const secure = tls.connect({ socket, servername: host }, () => resolve(secure));
    secure.once("error", reject);
  });
}

/** RFC 5321 "dot-stuffing" and CRLF line ends for the DATA section. */
function body(cfg: SmtpConfig, mail: Mail): string {
  const headers = [
    `From: ${cfg.from}`,
    `To: ${mail.to.join(", ")}`,
    `Subject: ${mail.subject.replace(/[\r\n]+/g, " ")}`,
    `Date: ${new Date().toUTCString()}`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: 8bit",
  ];
  const text = mail.text.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..");
  return `${headers.join("\r\n")}\r\n\r\n${text}\r\n.`;
}

/** Send one plain-text mail; rejects with the server's reply on any refusal, or after `timeoutMs`. */
export async function sendMail(cfg: SmtpConfig, mail: Mail, opts: { timeoutMs: number; heloName?: string; policy?: OutboundPolicy }): Promise<void> {
  const socket = await connect(cfg, opts.policy ?? getOutboundPolicy());
  const timer = setTimeout(() => socket.destroy(new Error(`SMTP timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
  const c = new Conversation(socket);
  const helo = opts.heloName ?? "slotkeeper.localhost";
  try {
    await c.command(null, [220]);
    let caps = await c.command(`EHLO ${helo}`, [250]);
    if (!cfg.secure && caps.some((l) => l.toUpperCase().startsWith("STARTTLS"))) {
      await c.command("STARTTLS", [220]);
      c.attach(await upgrade(c.socket, cfg.host));
      caps = await c.command(`EHLO ${helo}`, [250]);
    }
    if (cfg.user) {
      const auth = caps.find((l) => l.toUpperCase().startsWith("AUTH")) ?? "";
      if (/\bPLAIN\b/i.test(auth) || !/\bLOGIN\b/i.test(auth)) {
        const token = Buffer.from(`\0${cfg.user}\0${cfg.password ?? ""}`).toString("base64");
        await c.command(`AUTH PLAIN ${token}`, [235], "AUTH PLAIN");
      } else {
        await c.command("AUTH LOGIN", [334]);
        await c.command(Buffer.from(cfg.user).toString("base64"), [334], "AUTH LOGIN user");
        await c.command(Buffer.from(cfg.password ?? "").toString("base64"), [235], "AUTH LOGIN password");
      }
    }
    // "Slotkeeper <alerts@example.com>" in the header, the bare address in the envelope.
    const envelopeFrom = /<([^>]+)>/.exec(cfg.from)?.[1] ?? cfg.from;
    await c.command(`MAIL FROM:<${envelopeFrom}>`, [250]);
    for (const to of mail.to) await c.command(`RCPT TO:<${to}>`, [250, 251]);
    await c.command("DATA", [354]);
    await c.command(body(cfg, mail), [250], "DATA (message)");
    await c.command("QUIT", [221]).catch(() => undefined);
  } finally {
    clearTimeout(timer);
    c.socket.destroy();
  }
}
