/**
 * Process groups of the programs the `command` handler started. Each program leads a group of its
 * own (spawned detached), so one signal to the negative pid reaches it and everything it forked.
 */

/** Send `signal` to every process of the group led by `pid`; false when the group no longer exists. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

const live = new Set<number>();
let hooked = false;

/**
 * Remember a group until the returned function is called, and SIGKILL it if this process exits
 * first: a worker that exits (after its shutdown grace) leaves none of its programs running.
 * (A worker killed with SIGKILL cannot do this: its programs live on until they end.)
 */
export function killGroupsOnExit(pid: number): () => void {
  live.add(pid);
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const p of live) signalGroup(p, "SIGKILL");
    });
  }
  return () => void live.delete(pid);
}
