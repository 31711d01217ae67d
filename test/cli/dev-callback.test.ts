/**
 * The browser sign-in of `portier dev`, driven with fetch against a real `portier dev` on loopback (ports 0):
 * printed URL -> issuer authorize -> login page -> one-click form -> /callback -> a page with a token that
 * verifies with the issuer's JWKS, a curl line whose decision is an allow, and the tables of the routes this user
 * may call and those refused (checked against the access matrix's column of the user's role); wrong or replayed
 * state refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { startDevCallback, type RunningDevCallback } from "../../src/cli/dev-callback.js";
import { startIssuer, type RunningIssuer } from "../../src/issuer/index.js";
import { PROJECT_ROOT } from "../service/helpers.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { stopChild } from "../support/stop-child.js";
import { computeMatrix } from "../../src/review/index.js";
import { controlledEngine } from "../support/engine.js";

let proc: ChildProcess;
let out = "";
let signinUrl: string;
let issuerUrl: string;

beforeAll(async () => {
  proc = spawn(process.execPath, [PORTIER_BIN, "dev", "--port", "0", "--issuer-port", "0", "--callback-port", "0"], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const end = Date.now() + 30_000;
  while (!out.includes("Ctrl-C to stop.")) {
    if (Date.now() > end || proc.exitCode !== null) throw new Error(`dev did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  signinUrl = /Open in a browser[^:]*: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(out)![1]!;
  issuerUrl = (JSON.parse(out.split("\n").find((l) => l.includes('"msg":"listening"'))!) as { issuer: string }).issuer;
}, 40_000);
afterAll(async () => {
  // SIGTERM stops dev, which exits 0; a stop that hangs fails here instead of leaving the process behind.
  if (proc) expect(await stopChild(proc)).toBe(0);
});

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
/** The rows of the table with this id, as the text of their cells. */
const tableRows = (html: string, id: string): string[][] => {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? "";
  return [...table.matchAll(/<tr>((?:<td>[\s\S]*?<\/td>)+)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((c) => unescape(c[1]!.replace(/<\/?code>/g, ""))),
  );
};
const pre = (html: string, id: string) => unescape(new RegExp(`<pre id="${id}">([^<]*)</pre>`).exec(html)?.[1] ?? "");

async function get(url: string): Promise<{ status: number; location: string | null; body: string }> {
  const res = await fetch(url, { redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), body: await res.text() };
}

/** GET / on the sign-in page and the issuer's authorize URL it redirects to: the login page and the flow's state. */
async function startSignIn(signin = signinUrl, issuer = issuerUrl): Promise<{ loginPage: string; state: string }> {
  const start = await get(signin);
  expect(start.status).toBe(302);
  const authorize = new URL(start.location!);
  expect(authorize.href.startsWith(`${issuer}/connect/authorize?`)).toBe(true);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${signin}callback`);
  const login = await get(authorize.href);
  expect(login.status).toBe(200);
  return { loginPage: login.body, state: authorize.searchParams.get("state")! };
}

/** Signs enseignant.jeune in with the login page's one-click form: the /callback URL the issuer redirects to. */
async function oneClick(loginPage: string): Promise<string> {
  const form = new RegExp(
    String.raw`<form method="post" action="([^"]+)" class="one-click"><input type="hidden" ` +
      String.raw`name="request_id" ` +
      String.raw`value="([^"]+)"><input type="hidden" name="login_hint" value="enseignant\.jeune">`,
  ).exec(loginPage);
  expect(form, "one-click form for enseignant.jeune").not.toBeNull();
  const posted = await fetch(unescape(form![1]!), {
    method: "POST",
    body: new URLSearchParams({ request_id: unescape(form![2]!), login_hint: "enseignant.jeune" }),
    redirect: "manual",
  });
  expect(posted.status).toBe(303);
  return posted.headers.get("location")!;
}

describe("portier dev: browser sign-in with the one-click sample users", () => {
  it("ends on /callback with a verifiable token and a curl line that is allowed", async () => {
    const callback = await oneClick((await startSignIn()).loginPage);
    expect(callback.startsWith(`${signinUrl}callback?`)).toBe(true);

    const page = await get(callback);
    expect(page.status).toBe(200);
    const accessToken = pre(page.body, "access-token");
    const { payload } = await jwtVerify(
      accessToken,
      createRemoteJWKSet(new URL(`${issuerUrl}/.well-known/openid-configuration/jwks`)),
      { issuer: issuerUrl },
    );
    expect(payload.sub).toBe("5db8efe5-c2dc-4aa9-90dc-1f8d12487df3");
    expect(JSON.parse(pre(page.body, "id-claims"))).toMatchObject({
      sub: payload.sub,
      iss: issuerUrl,
      aud: "portier-demo-web",
    });

    // Run the printed curl line's request with fetch: same URL, same body.
    const curl = /^curl -s -X POST (\S+) -H 'content-type: application\/json' -d '([^']+)'$/.exec(
      pre(page.body, "curl-decide"),
    );
    expect(curl).not.toBeNull();
    expect(JSON.parse(curl![2]!)).toMatchObject({ token: accessToken });
    const decision = (await (
      await fetch(curl![1]!, { method: "POST", headers: { "content-type": "application/json" }, body: curl![2]! })
    ).json()) as { reason: string; flow: string };
    expect(`${decision.flow}:${decision.reason}`).toBe("accessCode:allowed");

    const fwd = /-H 'X-Original-URI: ([^']+)' -H 'Authorization: Bearer ([^']+)'$/.exec(
      pre(page.body, "curl-forward-auth"),
    );
    expect(fwd![2]).toBe(accessToken);
    const url = /^curl -s -i (\S+)/.exec(pre(page.body, "curl-forward-auth"))![1]!;
    const answer = await fetch(url, {
      headers: { "X-Original-Method": "GET", "X-Original-URI": fwd![1]!, Authorization: `Bearer ${accessToken}` },
    });
    expect(answer.status).toBe(200);

    // What this user may call: every route and method once, allowed or refused as the matrix's enseignant_jeune
    // column says (the sample teacher of tenant A, asked on her own organisation code ORG001), each row the
    // service's answer. Columns: method, route, path asked (reason, why).
    const allowed = tableRows(page.body, "routes-allowed");
    const refused = tableRows(page.body, "routes-refused");
    const matrix = computeMatrix((await controlledEngine()).engine);
    const request = (r: string[]) => `${r[0]} ${r[1]}`;
    expect([...allowed, ...refused].map(request).sort()).toEqual(
      matrix.rows.map((r) => `${r.method} ${r.template}`).sort(),
    );
    for (const row of matrix.rows) {
      const cell = row.cells["enseignant_jeune"]!;
      const shown = (cell.allow ? allowed : refused).find((r) => request(r) === `${row.method} ${row.template}`);
      expect(shown, `${row.template}: ${cell.allow ? "allowed" : "refused"}`).toBeDefined();
      if (!cell.allow) expect(shown![3], row.template).toBe(cell.reason);
    }
    expect(allowed.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(allowed.find((r) => r[1] === "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences")?.[2]).toBe(
      "/v2/ORG001/elevesJeunes/sample-idEleveJeune/absences",
    );
    for (const [method, , path, reason, message] of refused.slice(0, 3)) {
      const asked = (await (
        await fetch(curl![1]!, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ method, path, token: accessToken }),
        })
      ).json()) as { allow: boolean; reason: string; message: string };
      expect({ allow: asked.allow, reason: asked.reason, message: asked.message }).toEqual({
        allow: false,
        reason,
        message,
      });
    }

    // The state is single-use: the same callback again is refused.
    const replay = await get(callback);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain("already used <code>state</code>");
  }, 40_000);

  it.each([
    ["a state this page never issued", "state=not-issued&code=abc"],
    ["no state", "code=abc"],
  ])("refuses %s with a clear page and no token", async (_name, query) => {
    const res = await get(`${signinUrl}callback?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toContain("Sign-in refused");
    expect(res.body).toContain("does not belong to a sign-in started here");
    expect(res.body).not.toContain("access-token");
  });

  it("shows the issuer's error for its own state, HTML-escaped", async () => {
    const { state } = await startSignIn();
    const res = await get(
      `${signinUrl}callback?state=${encodeURIComponent(state)}&error=access_denied` +
        `&error_description=${encodeURIComponent("<script>x</script>")}`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toContain("<code>access_denied</code>: &lt;script&gt;x&lt;/script&gt;");
    expect(res.body).not.toContain("<script>");
  });
});

describe("startDevCallback in process: bounds and failed exchanges", () => {
  let issuer: RunningIssuer;
  let web: RunningDevCallback;
  beforeAll(async () => {
    issuer = await startIssuer();
    web = await startDevCallback({ port: 0, issuerUrl: issuer.url, serviceUrl: "http://127.0.0.1:9" });
  });
  afterAll(async () => {
    await Promise.all([web?.close(), issuer?.close()]);
  });
  const stateOf = async (w: RunningDevCallback) => new URL((await get(w.url)).location!).searchParams.get("state")!;

  it("a code the issuer refuses: a 502 page with the issuer's error, and no token", async () => {
    const state = await stateOf(web);
    const res = await get(`${web.url}callback?state=${state}&code=not-a-code`);
    expect(res.status).toBe(502);
    expect(res.body).toContain("Code exchange failed");
    expect(res.body).toContain("invalid_grant");
    expect(res.body).not.toContain("access-token");
  });

  it("an unreachable issuer: a 502 page naming it", async () => {
    const dead = await startDevCallback({ port: 0, issuerUrl: "http://127.0.0.1:9", serviceUrl: "http://127.0.0.1:9" });
    try {
      const res = await get(`${dead.url}callback?state=${await stateOf(dead)}&code=abc`);
      expect(res.status).toBe(502);
      expect(res.body).toContain("cannot reach http://127.0.0.1:9");
    } finally {
      await dead.close();
    }
  });

  it("at most 100 sign-ins pending: the oldest state is forgotten first", async () => {
    const first = await stateOf(web);
    for (let i = 0; i < 100; i++) await stateOf(web);
    const res = await get(`${web.url}callback?state=${first}&code=abc`);
    expect(res.status).toBe(400);
    expect(res.body).toContain("does not belong to a sign-in started here");
  });

  it("a decision service that cannot be asked: the page says so and still shows the token", async () => {
    const failing = await startDevCallback({
      port: 0,
      issuerUrl: issuer.url,
      serviceUrl: "http://127.0.0.1:9",
      access: () => Promise.reject(new Error("the decision service has no policy loaded yet")),
    });
    try {
      const page = await get(await oneClick((await startSignIn(failing.url, issuer.url)).loginPage));
      expect(page.status).toBe(200);
      expect(pre(page.body, "access-token")).toMatch(/^ey/);
      expect(page.body).toContain("could not be asked: the decision service has no policy loaded yet");
      expect(page.body).not.toContain('id="routes-allowed"');
    } finally {
      await failing.close();
    }
  });

  it("anything but GET or HEAD is refused, unknown paths are 404", async () => {
    expect((await fetch(`${web.url}callback`, { method: "POST" })).status).toBe(405);
    expect((await get(`${web.url}nothing`)).status).toBe(404);
  });
});

describe("startDevCallback for a project with its own user scope", () => {
  const shape = {
    subjectClaim: "uid",
    tenantClaim: "org",
    userScope: "orders.read",
    applicationAudience: "orders-api",
    applicationScope: null,
  };
  let issuer: RunningIssuer;
  beforeAll(async () => {
    issuer = await startIssuer({ tokenShape: shape });
  });
  afterAll(async () => {
    await issuer?.close();
  });

  it.each([
    ["asks for the project's scope: the issuer shows its login page", "openid profile email orders.read", 200],
    ["asks for the spec's scope: the issuer refuses it", undefined, 302],
  ])("%s", async (_what, scope, status) => {
    const web = await startDevCallback({
      port: 0,
      issuerUrl: issuer.url,
      serviceUrl: "http://127.0.0.1:9",
      ...(scope !== undefined ? { scope } : {}),
    });
    try {
      const authorize = new URL((await get(web.url)).location!);
      expect(authorize.searchParams.get("scope")).toBe(scope ?? "openid profile email apiclients");
      const answer = await get(authorize.href);
      expect(answer.status).toBe(status);
      if (status === 302) expect(new URL(answer.location!).searchParams.get("error")).toBe("invalid_scope");
    } finally {
      await web.close();
    }
  });
});
