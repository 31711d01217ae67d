/**
 * GET /connect/authorize and the login form: RFC 6749 4.1.2.1 errors (redirected when the redirect URI is
 * valid, a 400 page otherwise), the sample-user login page, and login_hint only in dev mode.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIssuer, type RunningIssuer } from "../../src/issuer/index.js";
import {
  REDIRECT_URI,
  TEACHER,
  WEB_CLIENT,
  authorizeRaw,
  authorizeUrl,
  obtainCode,
  pkcePair,
  tokenRequest,
  type AuthorizeParams,
} from "./helpers.js";

let dev: RunningIssuer;
let strict: RunningIssuer;

beforeAll(async () => {
  [dev, strict] = await Promise.all([startIssuer(), startIssuer({ devMode: false })]);
});
afterAll(async () => {
  await Promise.all([dev.close(), strict.close()]);
});

function validParams(): AuthorizeParams {
  return {
    client_id: WEB_CLIENT,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid profile",
    state: "st-123",
    nonce: "n-456",
    code_challenge: pkcePair().challenge,
    code_challenge_method: "S256",
    login_hint: TEACHER.username,
  };
}

describe("authorize errors redirected to the client (redirect URI valid)", () => {
  it.each<[string, AuthorizeParams, string]>([
    ["missing response_type", { response_type: undefined }, "invalid_request"],
    ["response_type token", { response_type: "token" }, "unsupported_response_type"],
    ["missing code_challenge", { code_challenge: undefined }, "invalid_request"],
    ["plain PKCE method", { code_challenge_method: "plain" }, "invalid_request"],
    ["missing PKCE method", { code_challenge_method: undefined }, "invalid_request"],
    ["malformed code_challenge", { code_challenge: "abc" }, "invalid_request"],
    ["missing scope", { scope: undefined }, "invalid_scope"],
    ["scope not allowed", { scope: "openid admin" }, "invalid_scope"],
    ["unknown login_hint user", { login_hint: "nobody" }, "access_denied"],
  ])("%s -> %s", async (_name, change, error) => {
    const { status, location } = await authorizeRaw(dev.url, { ...validParams(), ...change });
    expect(status).toBe(302);
    expect(location?.origin + (location?.pathname ?? "")).toBe(REDIRECT_URI);
    expect(location?.searchParams.get("error")).toBe(error);
    expect(location?.searchParams.get("state")).toBe("st-123");
    expect(location?.searchParams.get("iss")).toBe(dev.url);
    expect(location?.searchParams.has("code")).toBe(false);
  });

  it("a repeated parameter -> invalid_request", async () => {
    const url = `${authorizeUrl(dev.url, validParams())}&scope=email`;
    const res = await fetch(url, { redirect: "manual" });
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });
});

describe("authorize errors shown as a 400 page (no redirect)", () => {
  it.each<[string, AuthorizeParams]>([
    ["unknown client", { client_id: "nobody" }],
    ["missing client_id", { client_id: undefined }],
    ["unregistered redirect URI", { redirect_uri: "http://127.0.0.1:8400/other" }],
    ["redirect URI not an exact match", { redirect_uri: `${REDIRECT_URI}/` }],
    ["missing redirect URI", { redirect_uri: undefined }],
    ["client without the code flow", { client_id: "portier-demo-machine" }],
  ])("%s", async (_name, change) => {
    const { status, location, body } = await authorizeRaw(dev.url, { ...validParams(), ...change });
    expect(status).toBe(400);
    expect(location).toBeUndefined();
    expect(body).toContain("Authorization request refused");
  });
});

describe("sign-in", () => {
  it("login_hint signs the user in directly in dev mode", async () => {
    const { location } = await obtainCode(dev.url);
    expect(location.searchParams.get("iss")).toBe(dev.url);
    expect(location.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("login_hint does not skip the password when dev mode is off", async () => {
    const { status, body } = await authorizeRaw(strict.url, validParams());
    expect(status).toBe(200);
    expect(body).toContain('value="enseignant.jeune"');
    expect(body).toContain('type="password"');
  });

  it("prompt=none without login_hint -> login_required", async () => {
    const { location } = await authorizeRaw(dev.url, { ...validParams(), login_hint: undefined, prompt: "none" });
    expect(location?.searchParams.get("error")).toBe("login_required");
  });

  it(
    "the login page lists the sample users, says it is " + "for development, and signs in with username + password",
    async () => {
      const params = { ...validParams(), login_hint: undefined };
      const page = await authorizeRaw(strict.url, params);
      expect(page.status).toBe(200);
      expect(page.body).toContain("not for production");
      expect(page.body).toContain("portier-dev"); // the documented password of the bundled sample users
      for (const u of ["enseignant.jeune", "synced.sans.role", "non.synchronise", "enseignant.jeune.b"])
        expect(page.body).toContain(u);
      const requestId = /name="request_id" value="([^"]+)"/.exec(page.body)?.[1];
      expect(requestId).toBeTruthy();

      const post = (password: string) =>
        fetch(`${strict.url}/connect/login`, {
          method: "POST",
          redirect: "manual",
          body: new URLSearchParams({ request_id: requestId!, username: "directeur.jeune", password }),
        });
      const wrong = await post("nope");
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain("wrong password");

      const ok = await post("portier-dev");
      expect(ok.status).toBe(303);
      const callback = new URL(ok.headers.get("location")!);
      expect(callback.searchParams.get("state")).toBe("st-123");
      expect(callback.searchParams.get("code")).toBeTruthy();

      // The pending request is spent.
      expect((await post("portier-dev")).status).toBe(400);
    },
  );

  it("an unknown login request id is a 400 page", async () => {
    const res = await fetch(`${dev.url}/connect/login`, {
      method: "POST",
      body: new URLSearchParams({ request_id: "x", username: "a", password: "b" }),
    });
    expect(res.status).toBe(400);
  });

  it("the code from the login form works at the token endpoint with its verifier", async () => {
    const { verifier, challenge } = pkcePair();
    const page = await authorizeRaw(strict.url, { ...validParams(), login_hint: undefined, code_challenge: challenge });
    const requestId = /name="request_id" value="([^"]+)"/.exec(page.body)![1]!;
    const ok = await fetch(`${strict.url}/connect/login`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ request_id: requestId, username: "eleve.adulte", password: "portier-dev" }),
    });
    const code = new URL(ok.headers.get("location")!).searchParams.get("code")!;
    const res = await tokenRequest(strict.url, {
      grant_type: "authorization_code",
      client_id: WEB_CLIENT,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
    expect(res.body["scope"]).toBe("openid profile");
  });
});

describe("one-click sample users on the login page (dev mode only)", () => {
  async function loginPage(issuer: RunningIssuer): Promise<{ body: string; requestId: string }> {
    const page = await authorizeRaw(issuer.url, { ...validParams(), login_hint: undefined });
    expect(page.status).toBe(200);
    return { body: page.body, requestId: /name="request_id" value="([^"]+)"/.exec(page.body)![1]! };
  }
  const postHint = (issuer: RunningIssuer, requestId: string, hint: string) =>
    fetch(`${issuer.url}/connect/login`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ request_id: requestId, login_hint: hint }),
    });

  it("dev mode: a button per sample user signs that user in without a password", async () => {
    const { body, requestId } = await loginPage(dev);
    for (const u of dev.issuer.users)
      expect(body).toContain(
        `name="login_hint" value="${u.preferred_username}"><button type="submit">Sign in ` +
          `as ${u.preferred_username}</button>`,
      );
    const res = await postHint(dev, requestId, TEACHER.username);
    expect(res.status).toBe(303);
    const callback = new URL(res.headers.get("location")!);
    expect(callback.searchParams.get("state")).toBe("st-123");
    expect(callback.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("dev mode: an unknown user is refused with the login page again", async () => {
    const { requestId } = await loginPage(dev);
    const res = await postHint(dev, requestId, "nobody");
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("Unknown username or wrong password.");
  });

  it("dev mode off: no buttons, and a posted login_hint without the password is refused", async () => {
    const { body, requestId } = await loginPage(strict);
    expect(body).not.toContain('name="login_hint"');
    const res = await postHint(strict, requestId, TEACHER.username);
    expect(res.status).toBe(401);
    expect(res.headers.get("location")).toBeNull();
  });
});

describe("loopback redirect URI on another port (RFC 8252 7.3, dev mode only)", () => {
  it.each<[string, string, number]>([
    ["registered 127.0.0.1 URI on another port, dev mode", "http://127.0.0.1:39999/callback", 302],
    ["another path on another port", "http://127.0.0.1:39999/other", 400],
    ["localhost (a name, not a loopback IP) on another port", "http://localhost:39999/callback", 400],
    ["https on another port", "https://127.0.0.1:39999/callback", 400],
    ["with a query", "http://127.0.0.1:39999/callback?x=1", 400],
  ])("%s -> %s", async (_name, redirectUri, status) => {
    const res = await authorizeRaw(dev.url, { ...validParams(), redirect_uri: redirectUri });
    expect(res.status).toBe(status);
    if (status === 302) {
      expect(`${res.location!.origin}${res.location!.pathname}`).toBe(redirectUri);
      expect(res.location!.searchParams.get("code")).toBeTruthy();
    }
  });

  it("dev mode off: exact match only", async () => {
    const res = await authorizeRaw(strict.url, { ...validParams(), redirect_uri: "http://127.0.0.1:39999/callback" });
    expect(res.status).toBe(400);
  });

  it("the code is bound to the port it was sent to: the token request must name the same redirect URI", async () => {
    const redirectUri = "http://127.0.0.1:39999/callback";
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeRaw(dev.url, {
      ...validParams(),
      redirect_uri: redirectUri,
      code_challenge: challenge,
    });
    const code = location!.searchParams.get("code")!;
    const wrong = await tokenRequest(dev.url, {
      grant_type: "authorization_code",
      client_id: WEB_CLIENT,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(wrong.status).toBe(400);
  });
});
