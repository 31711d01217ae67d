/**
 * The OCI image (Containerfile), run the way this machine can run it: `buildah run --isolation chroot` (the
 * image's file system, user and environment, on the host's network and process namespace; podman's runtime
 * cannot start containers here). The image is the one `make test` built once before vitest (its name in
 * build/image-name); run alone, this file builds it with tools/build-image.sh when that file is missing
 * (`make image-for-tests` rebuilds it). Skipped, saying why, where buildah is not installed.
 * Checked: the image's entrypoint and command start Portier from a mounted config file alone, /ready answers,
 * decisions flow through a real nginx in front (the shipped docs/gateways/nginx.conf), the process is not root
 * and writes nothing outside /tmp, SIGTERM ends it with exit 0 after answering a request in flight, a missing
 * or broken mounted file gives the line the same configuration gives outside a container, and the image holds
 * no test files, no .git, no private key, no build tools.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { freePort } from "../support/free-port.js";
import { until } from "../support/until.js";
import { makeKeys, machineToken, sampleServeArgs, tempDir, userToken, TEACHER, type Keys } from "../service/helpers.js";
import { startGateway, type RunningGateway } from "../e2e/harness/gateways.js";
import { nginxMissing } from "../e2e/harness/static-nginx.js";
import { startUpstream, type RunningUpstream } from "../e2e/harness/upstream.js";
import { send, bearer } from "../e2e/harness/http.js";

const buildahMissing = spawnSync("buildah", ["--version"]).status !== 0;
if (buildahMissing)
  console.warn(
    "image tests skipped: buildah is not installed (apt-get install buildah podman mmdebstrap; .ci/run does)",
  );
if (!buildahMissing && nginxMissing())
  console.warn("image tests through nginx skipped: nginx is not installed (apt-get install nginx-light; .ci/run does)");

const NAME_FILE = join(PROJECT_ROOT, "build", "image-name");
const MOUNT = "/etc/portier";

/** The image make test built, or one built now (once per run of this file). */
function imageName(): string {
  if (!existsSync(NAME_FILE)) {
    const out = execFileSync("bash", [join(PROJECT_ROOT, "tools", "build-image.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    mkdirSync(join(PROJECT_ROOT, "build"), { recursive: true });
    writeFileSync(NAME_FILE, out.trim().split("\n").at(-1)!);
  }
  return readFileSync(NAME_FILE, "utf8").trim();
}

function buildah(...args: string[]): string {
  return execFileSync("buildah", args, { encoding: "utf8" }).trim();
}

interface ImageConfig {
  Entrypoint: string[];
  Cmd: string[];
  User: string;
  StopSignal: string;
  ExposedPorts: Record<string, unknown>;
  Labels: Record<string, string>;
  Env: string[];
}

interface Run {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Runs a command in a fresh container of the image with hostDir mounted read-only at /etc/portier. */
function runInImage(image: string, hostDir: string, command: string[], containers: string[]): Run {
  // As a ConfigMap volume is: readable by the image's user.
  chmodSync(hostDir, 0o755);
  const ctr = buildah("from", "--pull=never", "--quiet", image);
  containers.push(ctr);
  const proc = spawn(
    "buildah",
    ["run", "--isolation", "chroot", "--volume", `${hostDir}:${MOUNT}:ro`, ctr, "--", ...command],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  // "close", not "exit": a process may exit before its pipes are read to the end, and on a loaded machine a
  // container's whole stderr was still unread when "exit" came.
  const exited = new Promise<number | null>((resolve) => proc.once("close", (code) => resolve(code)));
  // buildah's own lines about the command's exit status are not the program's.
  const own = /^(subprocess exited with status \d+|Error: exit status \d+)$/;
  const programStderr = () =>
    stderr
      .split("\n")
      .filter((l) => !own.test(l))
      .join("\n");
  return { proc, stdout: () => stdout, stderr: programStderr, exited };
}

/** The host PID of the node process serving on `port` (the container shares the host's process namespace). */
function servingPid(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .filter((l) => l.split(/\s+/)[2]?.endsWith(`:${hex}`) && l.split(/\s+/)[4] === "0A")
      .map((l) => l.trim().split(/\s+/)[9]),
  );
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(pid);
      }
    } catch {
      // a process that ended meanwhile, or one we may not look into
    }
  }
  throw new Error(`no process listens on port ${port}`);
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

describe.skipIf(buildahMissing)("the OCI image", () => {
  let image = "";
  let config: ImageConfig;
  const containers: string[] = [];
  beforeAll(() => {
    image = imageName();
    const inspected = JSON.parse(buildah("inspect", "--type", "image", image)) as { OCIv1: { config: ImageConfig } };
    config = inspected.OCIv1.config;
  }, 1_800_000);
  afterAll(() => {
    for (const ctr of containers) spawnSync("buildah", ["rm", ctr]);
  });

  it("is labelled, runs portier serve as a fixed non-root user, stops on SIGTERM and exposes the three ports", () => {
    expect(config.Entrypoint).toEqual(["portier"]);
    expect(config.Cmd).toEqual(["serve"]);
    expect(config.User).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    expect(config.StopSignal).toBe("SIGTERM");
    expect(Object.keys(config.ExposedPorts).sort()).toEqual(["8181/tcp", "8182/tcp", "9191/tcp"]);
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    expect(config.Labels).toMatchObject({
      "org.opencontainers.image.version": pkg.version,
      "org.opencontainers.image.licenses": "Apache-2.0",
    });
    expect(config.Labels["org.opencontainers.image.revision"]).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
    expect(config.Labels["org.opencontainers.image.source"]).toMatch(/^https:\/\//);
    // portier_build_info's revision label reads it.
    expect(config.Env).toContain(`PORTIER_REVISION=${config.Labels["org.opencontainers.image.revision"]}`);
    const size = Number(
      execFileSync("podman", ["image", "inspect", "--format", "{{.Size}}", image], { encoding: "utf8" }),
    );
    console.log(`image ${image}: ${(size / 1e6).toFixed(0)} MB uncompressed`);
    expect(size).toBeLessThan(250e6);
  });

  it("runs the Node 24 LTS that tools/ensure-node.sh pins, from the npm registry's binary, without Debian's", () => {
    const pinned = execFileSync("bash", [join(PROJECT_ROOT, "tools", "ensure-node.sh"), "--version"], {
      encoding: "utf8",
    }).trim();
    expect(readFileSync(join(PROJECT_ROOT, "Containerfile"), "utf8")).toContain(`ARG NODE_VERSION=${pinned}\n`);
    const ctr = buildah("from", "--pull=never", "--quiet", image);
    containers.push(ctr);
    const version = buildah("run", "--isolation", "chroot", ctr, "--", "node", "--version");
    expect(version).toBe(`v${pinned}`);
    const root = buildah("mount", ctr);
    try {
      expect(existsSync(join(root, "usr", "bin", "node")), "Debian's node").toBe(false);
      expect(existsSync(join(root, "usr", "bin", "nodejs")), "Debian's nodejs").toBe(false);
      // dist/ holds what the built CLI loads: the gRPC protos beside the compiled server, none under src/.
      expect(existsSync(join(root, "opt", "portier", "dist", "service", "grpc", "protos"))).toBe(true);
      expect(existsSync(join(root, "opt", "portier", "src"))).toBe(false);
    } finally {
      buildah("umount", ctr);
    }
  });

  it("builds with the OPA version tools/ensure-opa.sh pins", () => {
    const pinned = execFileSync("bash", [join(PROJECT_ROOT, "tools", "ensure-opa.sh"), "--version"], {
      encoding: "utf8",
    }).trim();
    expect(readFileSync(join(PROJECT_ROOT, "Containerfile"), "utf8")).toContain(`ARG OPA_VERSION=${pinned}\n`);
  });

  it("holds no tests, no .git, no private key, no compiler, OPA or npm", () => {
    const ctr = buildah("from", "--pull=never", "--quiet", image);
    containers.push(ctr);
    const root = buildah("mount", ctr);
    try {
      const app = join(root, "opt", "portier");
      const files = walk(app).map((f) => f.slice(app.length));
      expect(files.length).toBeGreaterThan(100);
      expect(
        files.filter((f) => /^\/(test|tools|\.git|policies\/.*\.rego$)|_test\.rego$|\.test\.[jt]s$/.test(f)),
      ).toEqual([]);
      expect(
        files.filter((f) => f.startsWith("/node_modules/") && /\/(typescript|vitest|tsx|eslint)\//.test(f)),
      ).toEqual([]);
      expect(files).toContain("/build/bundle.tar.gz");
      expect(files).toContain("/data/sample/directory.json");
      // A PEM private key (its base64 body, not only the label a library's code names) or a private JWK.
      const pem = /-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]{64,}-----END/;
      const jwk = /"kty"\s*:[^}]*"d"\s*:\s*"|"d"\s*:\s*"[^}]*"kty"\s*:/;
      const withKey = walk(join(root, "opt")).filter((f) => {
        if (statSync(f).size > 4_000_000) return false;
        const text = readFileSync(f, "latin1");
        return pem.test(text) || (f.endsWith(".json") && jwk.test(text));
      });
      expect(withKey).toEqual([]);
      for (const tool of ["usr/local/bin/opa", "usr/bin/npm", "usr/local/go", "usr/bin/go", "usr/bin/tsc"])
        expect(existsSync(join(root, tool)), tool).toBe(false);
      expect(readdirSync(root).filter((e) => e === ".git")).toEqual([]);
    } finally {
      buildah("umount", ctr);
    }
  });

  describe("serving from a mounted config file", () => {
    let keys: Keys;
    let hostDir = "";
    let port = 0;
    let adminPort = 0;
    let run: Run | undefined;
    let pid = 0;
    let startMs = 0;
    let nginx: RunningGateway | undefined;
    let upstream: RunningUpstream | undefined;

    beforeAll(async () => {
      keys = await makeKeys();
      // sampleServeArgs writes jwks.json and directory.json into one folder: that folder is the mount.
      const args = sampleServeArgs(keys);
      hostDir = join(args[args.indexOf("--jwks") + 1]!, "..");
      port = await freePort();
      adminPort = await freePort();
      writeFileSync(
        join(hostDir, "portier.json"),
        JSON.stringify({
          issuer: args[args.indexOf("--issuer") + 1],
          jwks: `${MOUNT}/jwks.json`,
          directory: `${MOUNT}/directory.json`,
          host: "127.0.0.1",
          port,
          adminHost: "127.0.0.1",
          adminPort,
          workers: 1,
        }),
      );
      const started = Date.now();
      run = runInImage(
        image,
        hostDir,
        [...config.Entrypoint, ...config.Cmd, "--config", `${MOUNT}/portier.json`],
        containers,
      );
      await until(
        async () => (await fetch(`http://127.0.0.1:${adminPort}/ready`).catch(() => undefined))?.status === 200,
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${run?.stderr()} ${run?.stdout()}`);
      });
      startMs = Date.now() - started;
      console.log(`image: portier serve ready ${startMs} ms after buildah run`);
      pid = servingPid(port);
    }, 120_000);
    afterAll(async () => {
      await nginx?.stop();
      await upstream?.close();
      if (run && run.proc.exitCode === null) {
        run.proc.kill("SIGKILL");
        try {
          if (pid) process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });

    it("answers /ready and /health on the admin port", async () => {
      const ready = await fetch(`http://127.0.0.1:${adminPort}/ready`);
      expect(ready.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${adminPort}/health`)).status).toBe(200);
    });

    it("runs as the image's user, not root", () => {
      const uid = Number(config.User.split(":")[0]);
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const [real, effective, saved] = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
      expect([real, effective, saved]).toEqual([uid, uid, uid]);
      // The image's entrypoint, run by node (its #! line).
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, 3)).toEqual([
        "node",
        "/usr/local/bin/portier",
        "serve",
      ]);
    });

    it.skipIf(nginxMissing())("decides for a real nginx in front (the shipped nginx.conf)", async () => {
      upstream = await startUpstream();
      nginx = await startGateway("nginx", { authPort: port, upstreamPort: upstream.port });
      const allowed = await send(nginx.url, "/v2/ORG001/elevesAdultes", { headers: bearer(await machineToken(keys)) });
      expect(allowed.status, nginx.logs()).toBe(200);
      expect(upstream.seen.at(-1)?.portier["x-portier-flow"]).toBe("application");
      const teacher = await userToken(keys, TEACHER);
      const refused = await send(nginx.url, "/v2/ORG001/elevesAdultes", { headers: bearer(teacher) });
      expect(refused.status).toBe(403);
      expect((await send(nginx.url, "/v2/ORG001/centres")).status).toBe(401);
      expect(upstream.seen).toHaveLength(1);
    });

    it("ends on SIGTERM with exit 0, answering the request in flight first", async () => {
      // A POST /decide whose body is not complete yet when the signal arrives.
      const body = JSON.stringify({ method: "GET", path: "/v2/ORG001/centres", token: await machineToken(keys) });
      const socket = connect(port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      let answer = "";
      socket.on("data", (d: Buffer) => (answer += d.toString()));
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.write(
        `POST /decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ` +
          `application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.slice(0, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      process.kill(pid, "SIGTERM");
      // The service has begun its stop (its log says so) while the request is still unfinished.
      await until(() => run!.stdout().includes('"event":"stopping","signal":"SIGTERM"'), 10_000);
      socket.write(body.slice(10));
      await closed;
      expect(answer, run!.stdout() + run!.stderr()).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toContain('"allow":true');
      expect(await run!.exited).toBe(0);
      expect(run!.stderr()).toBe("");
    }, 60_000);

    it("wrote nothing outside /tmp (a read-only root file system is enough)", () => {
      // The container's own layer holds every file the run created or changed.
      const ctr = containers.at(-1)!;
      const changes = execFileSync("podman", ["diff", ctr], { encoding: "utf8" })
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => l.replace(/^[ACD] /, ""))
        // Made by buildah run itself: the mount point and the files it bind-mounts in.
        .filter(
          (p) => !/^\/(etc\/portier|etc\/hosts|etc\/resolv\.conf|etc\/hostname|etc|run|dev|proc|sys)(\/|$)/.test(p),
        );
      expect(changes.filter((p) => !/^\/tmp(\/|$)/.test(p))).toEqual([]);
    });
  });

  describe("start-up failures from mounted files", () => {
    let keys: Keys;
    beforeAll(async () => {
      keys = await makeKeys();
    });

    /** The same configuration run in the image (files under /etc/portier) and outside it (files in hostDir). */
    async function both(prepare: (dir: string) => Record<string, unknown>) {
      const args = sampleServeArgs(keys);
      const hostDir = join(args[args.indexOf("--jwks") + 1]!, "..");
      const settings = { issuer: args[args.indexOf("--issuer") + 1], port: 0, workers: 1, ...prepare(hostDir) };
      const at = (dir: string) =>
        JSON.parse(JSON.stringify(settings).replaceAll("@DIR@", dir)) as Record<string, unknown>;
      const outsideDir = tempDir();
      writeFileSync(join(hostDir, "portier.json"), JSON.stringify(at(MOUNT)));
      writeFileSync(join(outsideDir, "portier.json"), JSON.stringify(at(hostDir)));
      const inside = runInImage(image, hostDir, ["portier", "serve", "--config", `${MOUNT}/portier.json`], containers);
      const outside = spawnSync(
        process.execPath,
        [PORTIER_BIN, "serve", "--config", join(outsideDir, "portier.json")],
        {
          encoding: "utf8",
          timeout: 30_000,
        },
      );
      const code = await inside.exited;
      return {
        inside: { code, stderr: inside.stderr().replaceAll(MOUNT, "@DIR@") },
        outside: {
          code: outside.status,
          stderr: outside.stderr.replaceAll(hostDir, "@DIR@").replaceAll(outsideDir, "@DIR@"),
        },
      };
    }

    it.each<[string, (dir: string) => Record<string, unknown>, number]>([
      ["a missing directory file", () => ({ jwks: "@DIR@/jwks.json", directory: "@DIR@/absent.json" }), 2],
      [
        "a broken directory file",
        (dir) => (
          writeFileSync(join(dir, "directory.json"), '[{"sub":'),
          { jwks: "@DIR@/jwks.json", directory: "@DIR@/directory.json" }
        ),
        2,
      ],
      [
        "a broken JWKS file",
        (dir) => (
          writeFileSync(join(dir, "jwks.json"), "{}"),
          { jwks: "@DIR@/jwks.json", directory: "@DIR@/directory.json" }
        ),
        2,
      ],
      ["a missing bundle", () => ({ bundle: "@DIR@/none.tar.gz", jwks: "@DIR@/jwks.json", noDirectory: true }), 2],
      ["a bad option in the file", () => ({ jwks: "@DIR@/jwks.json", noDirectory: true, port: "http" }), 2],
    ])(
      "%s: the line start-up prints outside a container",
      async (_what, prepare, code) => {
        const { inside, outside } = await both(prepare);
        expect(outside.code).toBe(code);
        expect(outside.stderr).toMatch(/^portier serve: config[.\w]*: .+\n/);
        expect(inside.stderr).toBe(outside.stderr);
        expect(inside.code).toBe(code);
      },
      60_000,
    );
  });
});
