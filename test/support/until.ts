/**
 * Test support: waits until a condition holds (polled), or fails after a timeout.
 */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, stepMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
