/**
 * Poll `check` until it holds (another process or loop changes the database), or fail naming
 * `what`. Tests wait on the condition itself, never for a stretch of wall-clock time, so a busy
 * machine makes them slower, not wrong; `timeoutMs` only bounds how long a broken run hangs.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 50): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * `promise`, or fail naming `what` once `timeoutMs` has passed: for a single wait that has no
 * condition to poll (a pool handing out a connection), so a hang fails with its name rather than
 * as the test's own time limit.
 */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
