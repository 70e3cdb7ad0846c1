import { describe, expect, it } from "vitest";
import { ConfigError, configDefaults, loadConfig } from "./config";

describe("loadConfig", () => {
  it("gives the named defaults for an empty environment", () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBeUndefined();
    expect(c.port).toBe(configDefaults.port);
    expect(c.pollIntervalMs).toBe(configDefaults.pollIntervalMs);
    expect(c.partitions).toBe(configDefaults.partitions);
    expect(c.partitionLeaseSeconds).toBe(15);
  });

  it("takes a shorter partition lease for faster take-over, within bounds", () => {
    expect(loadConfig({ SLOTKEEPER_PARTITION_LEASE_SECONDS: "5" }).partitionLeaseSeconds).toBe(5);
    expect(() => loadConfig({ SLOTKEEPER_PARTITION_LEASE_SECONDS: "1" })).toThrow(/SLOTKEEPER_PARTITION_LEASE_SECONDS/);
  });

  it("names the variable that is wrong", () => {
    expect(() => loadConfig({ SLOTKEEPER_CONCURRENCY: "lots" })).toThrow(ConfigError);
    expect(() => loadConfig({ SLOTKEEPER_CONCURRENCY: "lots" })).toThrow(/SLOTKEEPER_CONCURRENCY/);
    expect(() => loadConfig({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
  });

  it("reads SLOTKEEPER_COMMANDS: unset is no programs, `all`, or absolute paths (normalised, deduplicated)", () => {
    expect(loadConfig({}).commands).toBeNull();
    expect(loadConfig({ SLOTKEEPER_COMMANDS: "all" }).commands).toBe("all");
    expect(loadConfig({ SLOTKEEPER_COMMANDS: " /usr/bin/backup, /bin//sh ,/usr/bin/backup" }).commands).toEqual(["/usr/bin/backup", "/bin/sh"]);
    expect(() => loadConfig({ SLOTKEEPER_COMMANDS: "/bin/sh,backup" })).toThrow(/SLOTKEEPER_COMMANDS: "backup" is not an absolute path/);
    expect(() => loadConfig({ SLOTKEEPER_COMMANDS: "all,/bin/sh" })).toThrow(/SLOTKEEPER_COMMANDS/);
    expect(() => loadConfig({ SLOTKEEPER_COMMANDS: " , " })).toThrow(/SLOTKEEPER_COMMANDS/);
  });
});
