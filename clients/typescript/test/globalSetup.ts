// A real `jobbie dev` for the whole run: bin/jobbie (or $JOBBIE_BIN) on
// random 127.0.0.1 ports with a temporary data directory; the tests get
// its URL and the owner key through vitest's provide/inject.
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";

declare module "vitest" {
  export interface ProvidedContext {
    jobbie: { url: string; key: string; cert: string; certKey: string };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export default async function setup({ provide }: { provide: (k: "jobbie", v: { url: string; key: string; cert: string; certKey: string }) => void }) {
  const bin = process.env.JOBBIE_BIN ?? new URL("../../../bin/jobbie", import.meta.url).pathname;
  if (!existsSync(bin)) throw new Error(`no jobbie binary at ${bin}: run \`make ts-test\` or go build -o bin/jobbie ./cmd/jobbie`);
  const dir = mkdtempSync(`${tmpdir()}/jobbie-ts-`);
  // A certificate of 127.0.0.1 for the tests' own HTTPS receiver of pushes
  // and webhooks, which the server is told to trust.
  const cert = `${dir}/receiver.crt`;
  const certKey = `${dir}/receiver.key`;
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", certKey, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
  { stdio: "ignore" });
  const addr = `127.0.0.1:${await freePort()}`;
  const logFd = openSync(`${dir}/dev.log`, "w");
  const proc = spawn(bin, [
    "dev", "--data-dir", `${dir}/data`, "--addr", addr,
    "--control-addr", `127.0.0.1:${await freePort()}`, "--shard-addr", `127.0.0.1:${await freePort()}`,
    "--bulk-sync-max", "5", "--push-allow-private", "--push-ca-file", cert,
  ], { stdio: ["ignore", logFd, logFd] });
  const log = () => readFileSync(`${dir}/dev.log`, "utf8");
  const deadline = Date.now() + 90_000;
  while (!log().includes("Jobbie is running")) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`jobbie dev did not start:\n${log().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  provide("jobbie", {
    url: `http://${addr}`, key: readFileSync(`${dir}/data/owner.key`, "utf8").trim(),
    cert: readFileSync(cert, "utf8"), certKey: readFileSync(certKey, "utf8"),
  });
  return async () => {
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    const t = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(t);
    closeSync(logFd);
    rmSync(dir, { recursive: true, force: true });
  };
}
