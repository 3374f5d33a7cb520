// The few Node.js APIs the tests use (the package takes no @types/node:
// its own code runs on fetch and WebCrypto alone).
declare const process: {
  env: Record<string, string | undefined>;
  pid: number;
  execPath: string;
  emit(event: string): boolean;
  listenerCount(event: string): number;
};
declare module "node:child_process" {
  export function spawn(cmd: string, args: string[], opts?: unknown): {
    pid: number; exitCode: number | null; kill(sig?: string): boolean; once(e: string, f: (...a: unknown[]) => void): void;
    stdout: { on(e: "data", f: (chunk: Uint8Array) => void): void };
  };
}
declare module "node:child_process" {
  export function execFileSync(cmd: string, args: string[], opts?: unknown): unknown;
}
declare module "node:https" {
  interface IncomingMessage extends AsyncIterable<Uint8Array> {
    method?: string; url?: string; headers: Record<string, string | string[] | undefined>;
  }
  interface ServerResponse {
    writeHead(status: number, headers: Record<string, string>): void; end(body?: Uint8Array | string): void;
  }
  export function createServer(opts: { cert: string; key: string },
    handler: (req: IncomingMessage, res: ServerResponse) => void): {
    listen(port: number, host: string, cb: () => void): void; address(): { port: number }; close(cb?: () => void): void;
    closeAllConnections(): void;
  };
}
declare module "node:fs" {
  export function mkdtempSync(prefix: string): string;
  export function readFileSync(path: string, enc: "utf8"): string;
  export function existsSync(path: string): boolean;
  export function rmSync(path: string, opts?: unknown): void;
  export function openSync(path: string, flags: string): number;
  export function closeSync(fd: number): void;
  export function writeFileSync(path: string, data: string): void;
}
declare module "node:os" {
  export function tmpdir(): string;
}
declare module "node:net" {
  export function createServer(): {
    listen(port: number, host: string, cb: () => void): void; address(): { port: number }; close(cb: () => void): void;
  };
}
