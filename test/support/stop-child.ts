/**
 * Stops a child process a test started, and waits for it: SIGTERM, then its exit within `timeoutMs`, else SIGKILL.
 * Returns the exit code (or the signal that ended it), or "hung" when SIGTERM did not end it in time, so that a
 * stop that hangs fails the test instead of leaving a process behind.
 */
import type { ChildProcess } from "node:child_process";

export async function stopChild(proc: ChildProcess, timeoutMs = 10_000): Promise<number | string> {
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode ?? proc.signalCode ?? "gone";
  const exited = new Promise<number | string>((resolve) =>
    proc.once("exit", (code, signal) => resolve(code ?? signal ?? "gone")),
  );
  proc.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), timeoutMs)));
  const result = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (result === "hung") {
    proc.kill("SIGKILL");
    await exited;
  }
  return result;
}
