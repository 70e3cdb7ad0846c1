// People's password hashes: checked against scrypt computed here from the stored parameters and
// salt (node:crypto's scryptSync, not the module's own code path), so the stored string really is
// what it says it is.
import { scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashPassword, SCRYPT_PARAMS, verifyPassword } from "./password-hash";

describe("password hashes", () => {
  it("store scrypt with its parameters and a per-hash salt, and verify only the right password", async () => {
    const stored = await hashPassword("correct horse battery");
    const [alg, N, r, p, salt, key] = stored.split("$");
    expect(alg).toBe("scrypt");
    expect({ N: Number(N), r: Number(r), p: Number(p) }).toEqual(SCRYPT_PARAMS);
    const oracle = scryptSync("correct horse battery", Buffer.from(salt, "base64url"), 32, { N: Number(N), r: Number(r), p: Number(p), maxmem: 256 * Number(N) * Number(r) });
    expect(Buffer.from(key, "base64url").equals(oracle)).toBe(true);
    expect(Buffer.from(salt, "base64url")).toHaveLength(16);

    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
    expect(await verifyPassword("", stored)).toBe(false);

    const again = await hashPassword("correct horse battery");
    expect(again.split("$")[4]).not.toBe(salt);
    expect(again).not.toBe(stored);
  });

  it("verifies a hash made with other parameters (they travel with it) and refuses malformed ones", async () => {
    const salt = Buffer.from("0123456789abcdef");
    const old = scryptSync("older password", salt, 32, { N: 1024, r: 4, p: 2 });
    const stored = ["scrypt", 1024, 4, 2, salt.toString("base64url"), old.toString("base64url")].join("$");
    expect(await verifyPassword("older password", stored)).toBe(true);
    expect(await verifyPassword("other password", stored)).toBe(false);
    for (const bad of ["", "plain", "bcrypt$1$2$3$a$b", "scrypt$x$8$1$a$b", `scrypt$1024$4$2$${salt.toString("base64url")}$`, "scrypt$4194304$8$1$a$b"]) {
      expect(await verifyPassword("older password", bad), bad).toBe(false);
    }
  });
});
