// A real OpenID provider (oidc-provider) on loopback for the single sign-on tests: one client, and
// users with a `groups` claim, signed in at the provider's own development login page (any
// password; the login name is the user's subject).
import type { AddressInfo } from "node:net";
import http from "node:http";
import Provider from "oidc-provider";

export type TestUser = { sub: string; username: string; name: string; groups: string[] };

export type TestProvider = { issuer: string; clientId: string; clientSecret: string; stop: () => Promise<void> };

/** Start a provider on 127.0.0.1 (a free port) whose client may redirect to `redirectUris`. */
export async function startTestProvider(opts: { redirectUris: string[]; users: TestUser[] }): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "slotkeeper-test";
  const clientSecret = "slotkeeper-test-secret-0123456789";
  const bySub = new Map(opts.users.map((u) => [u.sub, u]));
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: opts.redirectUris, response_types: ["code"], grant_types: ["authorization_code"] }],
    claims: { openid: ["sub"], profile: ["name", "preferred_username"], groups: ["groups"] },
    scopes: ["openid", "profile", "groups"],
    pkce: { required: () => true },
    cookies: { keys: ["slotkeeper-test-provider-cookie-key"] },
    features: { devInteractions: { enabled: true } },
    // The dev login page's name field is the account id: a user's subject.
    findAccount: async (_ctx: unknown, id: string) => {
      const user = bySub.get(id);
      if (!user) return undefined;
      return { accountId: user.sub, claims: async () => ({ sub: user.sub, name: user.name, preferred_username: user.username, groups: user.groups }) };
    },
  });
  server.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * Sign in at the provider as a browser would, with plain HTTP requests and a cookie jar: follow
 * `authorizeUrl` to the login page, submit `sub`, accept the consent page, and return the callback
 * URL the provider redirects to (with code and state).
 */
export async function loginAtProvider(authorizeUrl: string, sub: string): Promise<URL> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
  };
  let url = new URL(authorizeUrl);
  let body: URLSearchParams | undefined;
  const origin = url.origin;
  for (let hop = 0; hop < 20; hop++) {
    if (url.origin !== origin) return url;
    const res = await fetch(url, { method: body ? "POST" : "GET", body, redirect: "manual", headers: { cookie: cookieHeader(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) } });
    keep(res);
    body = undefined;
    const location = res.headers.get("location");
    if (location) {
      url = new URL(location, url);
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`the provider answered ${res.status} with no form: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const [tag] of html.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(tag)?.[1];
      if (name) fields.set(name, /value="([^"]*)"/.exec(tag)?.[1] ?? "");
    }
    if (fields.has("login")) {
      fields.set("login", sub);
      fields.set("password", "any");
    }
    url = new URL(action.replace(/&amp;/g, "&"), url);
    body = fields;
  }
  throw new Error("too many hops at the provider");
}
