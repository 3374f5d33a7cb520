// A worker in a Node process of its own, stopped by a real SIGTERM: the
// job that ends within the grace is acked, the one that does not is
// failed with worker_shutdown, and the process exits by itself.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { client, queue, waitFor } from "./helpers.js";

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(`${tmpdir()}/jobbie-ts-worker-`);
  const root = new URL("..", import.meta.url).pathname;
  execFileSync(`${root}node_modules/.bin/tsc`, ["-p", `${root}tsconfig.build.json`, "--outDir", `${dir}/dist`, "--sourceMap", "false"]);
  writeFileSync(`${dir}/worker.mjs`, `
import { Client, Worker } from "./dist/index.js";
const c = new Client({ url: process.env.JOBBIE_URL, apiKey: process.env.JOBBIE_KEY });
// stdin lets the quick job end; closed then, so only the worker could keep the process alive
const release = new Promise((r) => process.stdin.once("data", () => { process.stdin.destroy(); r(); }));
const w = new Worker(c, { queues: [process.env.QUEUE], concurrency: 2, shutdownGraceMs: 5000, logger: console }, async (job) => {
  process.stdout.write("running " + job.payload + "\\n");
  if (job.payload === "quick") { await release; return "finished"; }
  await new Promise(() => {}); // never ends
});
await w.run();
process.stdout.write("stopped\\n");
`);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SIGTERM", () => {
  it("drains a worker process: finishes within the grace, fails the rest with worker_shutdown, exits 0", async () => {
    const { url, key } = inject("jobbie");
    const c = client();
    const q = queue();
    const [quick, stuck] = (await c.enqueueBatch([{ queue: q, payload: "quick" }, { queue: q, payload: "stuck", max_retries: 1 }])).job_ids!;
    const child = spawn(process.execPath, [`${dir}/worker.mjs`], {
      cwd: dir, env: { ...process.env, JOBBIE_URL: url, JOBBIE_KEY: key, QUEUE: q }, stdio: ["pipe", "pipe", "inherit"],
    }) as ReturnType<typeof spawn> & { stdin: { write(s: string): void } };
    let out = "";
    child.stdout.on("data", (b) => (out += new TextDecoder().decode(b)));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code as number | null)));
    await waitFor("both jobs running", () => out.includes("running quick") && out.includes("running stuck"));
    child.kill("SIGTERM");
    child.stdin.write("go\n"); // the quick job ends during the grace
    expect(await exited, out).toBe(0);
    expect(out).toContain("stopped");
    const q1 = await c.getJob(quick);
    expect(q1.state).toBe("completed");
    expect(q1.result).toBe("finished");
    const s = await c.getJob(stuck);
    expect(["retrying", "pending"]).toContain(s.state);
    expect(s.errors!.map((e) => e.error)).toEqual(["worker_shutdown"]);
  });
});
