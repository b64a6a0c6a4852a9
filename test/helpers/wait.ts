// Polling for a state instead of sleeping: the one wait the tests share.

/**
 * Call `fn` until it returns something other than undefined, null or false, and return that;
 * throw naming `what` after `timeoutMs`.
 */
export async function until<T>(
  what: string,
  fn: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v !== undefined && v !== null && v !== false) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
