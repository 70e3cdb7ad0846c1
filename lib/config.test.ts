import { describe, expect, it } from "vitest";
import { ConfigError, configDefaults, loadConfig, validateQueues } from "./config";

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

  it("reads DATABASE_READ_URL and the lag warning threshold", () => {
    expect(loadConfig({}).databaseReadUrl).toBeUndefined();
    expect(loadConfig({}).replicaLagWarnSeconds).toBe(configDefaults.replicaLagWarnSeconds);
    const c = loadConfig({ DATABASE_READ_URL: "postgres://u@standby:5432/db", SLOTKEEPER_REPLICA_LAG_WARN_SECONDS: "2.5" });
    expect(c).toMatchObject({ databaseReadUrl: "postgres://u@standby:5432/db", replicaLagWarnSeconds: 2.5 });
    expect(() => loadConfig({ DATABASE_READ_URL: "standby" })).toThrow(/DATABASE_READ_URL/);
    expect(() => loadConfig({ SLOTKEEPER_REPLICA_LAG_WARN_SECONDS: "-1" })).toThrow(/SLOTKEEPER_REPLICA_LAG_WARN_SECONDS/);
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

  it("reads SLOTKEEPER_QUEUES as queues with their concurrency; unset is default with SLOTKEEPER_CONCURRENCY", () => {
    expect(loadConfig({}).queues).toEqual({ default: configDefaults.workerConcurrency });
    expect(loadConfig({ SLOTKEEPER_CONCURRENCY: "4" }).queues).toEqual({ default: 4 });
    expect(loadConfig({ SLOTKEEPER_QUEUES: "default:10, reports:2" }).queues).toEqual({ default: 10, reports: 2 });
    expect(loadConfig({ SLOTKEEPER_QUEUES: "reports:1" }).queues).toEqual({ reports: 1 });
    for (const bad of ["default", "default:0", "default:x", "default:10,default:2", "-x:3", "a b:2", "default:10001", ",", "default:1.5"]) {
      expect(() => loadConfig({ SLOTKEEPER_QUEUES: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ SLOTKEEPER_QUEUES: bad }), bad).toThrow(/^invalid SLOTKEEPER_QUEUES: /);
    }
  });

  it("checks runWorker's queues option the same way, naming it", () => {
    expect(validateQueues({ default: 3, reports: 1 }, "runWorker queues")).toEqual({ default: 3, reports: 1 });
    for (const bad of [{}, { default: 0 }, { default: 2.5 }, { "no spaces": 1 }, { default: "3" }, [], null]) {
      expect(() => validateQueues(bad, "runWorker queues"), JSON.stringify(bad)).toThrow(/^invalid runWorker queues: /);
    }
  });
});
