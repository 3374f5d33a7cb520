// Shared by the tests: a client of the dev server, a queue of the test's
// own, and waiting on a condition with a generous bound (never a sleep).
import { inject } from "vitest";
import { Client, type ClientOptions } from "../src/index.js";

export function client(opts: Partial<ClientOptions> = {}): Client {
  const { url, key } = inject("jobbie");
  return new Client({ url, apiKey: key, ...opts });
}

export function queue(prefix = "ts"): string {
  return `${prefix}.${crypto.randomUUID().slice(0, 12)}`;
}

export async function waitFor<T>(what: string, cond: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await cond();
    if (got) return got as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
