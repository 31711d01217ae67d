/**
 * nginx as a plain static file server on 127.0.0.1 for the directory-feed tests: a test-only config in a fresh
 * temp dir serving <dir>/www with nginx's own ETag and 304 handling, dynamic gzip under /gz/, pre-compressed
 * files under /static/ (gzip_static), Basic authentication under /private/, and an access log that records
 * each request's status, Content-Encoding and If-None-Match. It can be stopped and started again on the
 * same port (a feed server going down and coming back).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { findBinary } from "./gateways.js";
import { LOOPBACK, freePort, waitForPort } from "./net.js";
import { startProcess, type Managed } from "./process.js";

export interface StaticNginx {
  url: string;
  port: number;
  /** The served folder (files written here are served at url + "/" + name). */
  www: string;
  /** Access log lines: `status "content-encoding" "if-none-match" uri`, "-" for none, quotes as \x22. */
  requests(): string[];
  /** Starts nginx (again); does nothing while it runs. */
  start(): Promise<void>;
  /** Stops nginx, keeping its folder (start() again serves the same files on the same port). */
  stop(): Promise<void>;
  /** Stops nginx and removes its folder. */
  close(): Promise<void>;
}

export const nginxMissing = (): boolean => findBinary("nginx") === undefined;

function config(dir: string, port: number, user: string): string {
  return `${user}
daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 64; }
http {
    client_body_temp_path ${dir}/tmp/client_body;
    proxy_temp_path ${dir}/tmp/proxy;
    fastcgi_temp_path ${dir}/tmp/fastcgi;
    uwsgi_temp_path ${dir}/tmp/uwsgi;
    scgi_temp_path ${dir}/tmp/scgi;
    types { application/x-ndjson ndjson; application/json json; application/gzip gz; }
    default_type application/octet-stream;
    log_format feed '$status "$sent_http_content_encoding" "$http_if_none_match" $uri';
    access_log ${dir}/access.log feed;
    server {
        listen ${LOOPBACK}:${port};
        root ${dir}/www;
        location /gz/ { gzip on; gzip_types application/x-ndjson; gzip_min_length 1; }
        location /static/ { gzip_static on; }
        location /private/ { auth_basic "feed"; auth_basic_user_file ${dir}/htpasswd; }
    }
}
`;
}

/** `users` are `name:password` pairs allowed under /private/. */
export async function startStaticNginx(users: Array<[string, string]> = []): Promise<StaticNginx> {
  const binary = findBinary("nginx");
  if (!binary) throw new Error("nginx not found");
  const dir = mkdtempSync(join(tmpdir(), "portier-e2e-feed-"));
  const www = join(dir, "www");
  for (const sub of [
    "www/gz",
    "www/static",
    "www/private",
    "tmp/client_body",
    "tmp/proxy",
    "tmp/fastcgi",
    "tmp/uwsgi",
    "tmp/scgi",
  ])
    mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "htpasswd"), users.map(([name, pass]) => `${name}:{PLAIN}${pass}\n`).join(""));
  const port = await freePort();
  // As root, nginx would switch its workers to "nobody"; keep them as the current user instead.
  writeFileSync(
    join(dir, "nginx.conf"),
    config(dir, port, process.getuid?.() === 0 ? `user ${userInfo().username};` : ""),
  );
  let proc: Managed | undefined;
  const logs = () =>
    `${proc?.output() ?? ""}\n${(() => {
      try {
        return readFileSync(join(dir, "error.log"), "utf8");
      } catch {
        return "";
      }
    })()}`;
  const server: StaticNginx = {
    url: `http://${LOOPBACK}:${port}`,
    port,
    www,
    requests() {
      try {
        return readFileSync(join(dir, "access.log"), "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    async start() {
      if (proc && proc.exited() === undefined) return;
      const p = startProcess(
        "nginx",
        binary,
        ["-p", `${dir}/`, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")],
        { cwd: dir },
      );
      proc = p;
      try {
        await waitForPort(port, {
          timeoutMs: 15_000,
          what: `nginx (${binary})`,
          failed: () => (p.exited() === undefined ? undefined : `${p.exited()}\n${logs()}`),
        });
      } catch (err) {
        await p.stop();
        throw err;
      }
    },
    async stop() {
      await proc?.stop();
      proc = undefined;
    },
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
