import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * People's passwords, hashed with scrypt (node:crypto) and a random 16-byte salt per account. The
 * stored string carries its parameters, `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`, so
 * raising them later leaves older hashes verifiable.
 */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // maxmem: scrypt needs 128 * N * r bytes; leave headroom so a larger stored N still verifies.
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hash a new password with the current parameters and a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return ["scrypt", N, r, p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Whether a password matches a stored hash (constant-time comparison); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(parts[5], "base64url");
  if (expected.length === 0) return false;
  const key = await derive(password, Buffer.from(parts[4], "base64url"), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing anybody knows: verified against when no account matches, so the time taken does not say which names exist. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString("hex"));
  return decoy;
}
