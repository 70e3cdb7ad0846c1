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
