/**
 * What each code means and what to do about it, for docs/reference/codes.md. The codes themselves come from the
 * sources (tools/docs/codes-reference.ts); a code found there without a note here, or a note for a code no longer
 * found, fails `make lint`, so every code the service or a command can print has an entry.
 */

export const CODE_NOTES: Record<string, string> = {
  // The policy's reasons (policies/portier/*.rego), in the order the checks run.
  allowed:
    "The call is allowed. The message says why (the role that allows it, synced users, or an application token).",
  token_shape_unknown:
    "The verified token is neither a user token (`sub`, `auth_time`, `idp`) nor an application token (`aud` and " +
    "`scope` holding `apiclients`, no `sub`), or it is an ID token. Send an access token of one of the two flows.",
  route_unknown:
    "No route of the table matches the path. Check the path against " +
    "`docs/access-matrix.md`; literal segments compare case-insensitively, accents count.",
  method_not_allowed:
    "The route has no entry for the request's method (policy; an entry without `methods` answers GET and HEAD " +
    "only, the message lists the methods the route answers), or the operator endpoint does not take this " +
    "method (405). Check the method the gateway forwards, or add an entry with `methods` to `data/routes.json`.",
  path_invalid:
    "The path could be read differently by an upstream (an encoded `/`, `;`, `#`, dot segments, invisible or " +
    "look-alike characters, invalid UTF-8), or a `{codeOrganisme}` is not `[A-Za-z0-9_-]{1,64}`. The " +
    "message names the character and its position. Percent-encode what should be data, or fix the client.",
  scope_missing: "A user token without the `apiclients` scope. Request the scope when signing the user in.",
  tenant_mismatch:
    "The organisation code of the path belongs to another tenant than the token's " +
    "`tenant_id` (or the token has none). Check `data/tenants.json` and the caller's tenant.",
  role_not_allowed:
    "None of the caller's roles may call the route. The message lists the roles " +
    "that may; change the directory record or the route's roles (see the policies guide).",
  not_synced:
    "The caller has no directory record for the token's tenant (or the roles claim is " +
    "absent), and the route requires a role or a synced user. Check the synced-users directory feed.",
  // Decisions the engine or the service makes itself (src/engine, src/service).
  input_invalid:
    "The policy input failed its schema (`policies/input.schema.json`); the " +
    "message names the field. A bug in an adapter or a hand-made `explain --input`.",
  policy_unavailable:
    "No policy bundle is loaded yet, so every decision is a deny. " +
    "`/ready` says why (`policy: ...`); fix the bundle path or bundle server.",
  policy_error:
    "The policy could not make a decision (a wasm trap); the decision log " +
    "line's `detail` says what failed. Report it with the bundle revision.",
  internal_error:
    "Nothing could be decided (an unexpected error, logged as `decision_error`); the answer is " +
    "a deny. Through gRPC it is an `INTERNAL` error, so keep Envoy's `failure_mode_allow` false.",
  request_invalid:
    "A gateway endpoint got a request its gateway would never send: a trusted header (`X-Original-*` for nginx, " +
    "`X-Forwarded-*` for Caddy and Traefik) missing, empty, repeated, or mixed with the other family; or a gRPC " +
    "CheckRequest without `attributes.request.http`. Check the gateway configuration against `docs/gateways/`. " +
    "An AuthZEN evaluation Portier cannot ask (a subject type other than user or identity, a resource type " +
    "other than route, an action name that is not an HTTP method): a deny whose `context.error` says which.",
  not_found: "No such endpoint (404). With `--admin-port`, `/health`, `/ready` and `/metrics` answer only there.",
  invalid_json:
    "The body of `POST /decide` or of an AuthZEN endpoint is not JSON; the message gives the parser's position.",
  invalid_request:
    "The body of `POST /decide` is JSON but not a decision request; the message names the field; the same for an " +
    "AuthZEN request body (400, no decision). From the local issuer: a required parameter is missing or repeated.",
  payload_too_large: "The body of `POST /decide` is over `--max-body-bytes` (413); the connection is closed.",
  unsupported_media_type:
    "`POST /decide` reads `application/json` (or " +
    "`application/<type>+json`) only (415). Send that Content-Type or none.",
  body_timeout: "The body of `POST /decide` did not arrive within `--body-timeout-ms` (408); the connection is closed.",
  // Token verification (src/auth): 401 with WWW-Authenticate.
  token_missing: "No `Authorization: Bearer` credential. The gateway must forward the Authorization header.",
  token_malformed:
    "Not one compact JWS, or two Authorization headers or two " +
    "credentials joined by a comma (as Envoy joins repeated headers).",
  token_too_large: "The token is over 8 KiB; it is refused before decoding.",
  alg_not_allowed: "The token's `alg` is not RS256, PS256 or ES256 (`none` and HMAC are never accepted).",
  kid_unknown:
    "No key of the issuer's key set has the token's `kid`, even after a refresh. The " +
    "issuer rotated keys Portier cannot fetch, or the token comes from another issuer.",
  signature_invalid:
    "A token whose signature does not verify with the issuer's key; or a bundle whose signature " +
    "(`/.signatures.json`) does not verify with `--verification-key` (the message names the file).",
  issuer_mismatch: "The token's `iss` is not `--issuer` exactly (a trailing slash counts); the message shows both.",
  audience_mismatch: "An ID token addressed to another client (`portier id-token validate --client-id`).",
  token_expired: "`exp` is past (30 s tolerance). Get a new token; keep the host's clock synchronised.",
  token_not_yet_valid:
    "`nbf` or `iat` is in the future (30 s tolerance). Check the clocks of the issuer and of this host.",
  typ_invalid: "The token's `typ` header names another kind of token.",
  id_token_not_accepted: "An ID token was sent as an access token. Send the access token.",
  claims_invalid: "A claim has the wrong type or a member name is given twice; the message names it.",
  crit_unsupported: "The token header has `crit`; no extension is supported.",
  keys_unavailable:
    "The issuer's keys are not loaded yet (the issuer or its JWKS URL is " +
    "unreachable); `/ready` names the keys. Calls are denied until they load.",
  nonce_mismatch: "`portier id-token validate`: the ID token's `nonce` is not `--nonce`.",
  at_hash_mismatch: "`portier id-token validate`: `at_hash` does not match `--access-token`.",
  s_hash_mismatch: "`portier id-token validate`: `s_hash` does not match `--state`.",
  token_invalid: "The family of every token verification code above.",
  // Bundles (src/engine): a start-up failure, or a refused reload while the previous bundle keeps serving.
  bundle_invalid:
    "The bundle is not a readable gzip tar of a Portier policy (also the " +
    "family of the bundle codes here). Rebuild it with `portier bundle build`.",
  bundle_unreadable: "The bundle file cannot be read (missing, permissions). Check `--bundle`.",
  bundle_too_large: "The bundle (download, file or inflated size) is over `--bundle-max-bytes`.",
  manifest_invalid: "The bundle's `.manifest` is not valid JSON of OPA's manifest shape.",
  entrypoint_missing:
    "The bundle lacks an entrypoint Portier evaluates (`portier/decision`, " +
    "`portier/catalog`). Build it with `portier bundle build`, which passes them to `opa build`.",
  wasm_invalid: "The bundle's `policy.wasm` is not a module the OPA wasm SDK can load.",
  data_invalid:
    "`data/` (routes, roles, tenants) or a bundle's `data.json` fails " +
    "its schema or a catalog rule; the message names the file and the field.",
  // Other errors of the commands and the service.
  role_name_invalid:
    "Two roles share a name (id, label or alias), or a name is " +
    "blank or holds a comma; the message names both roles and fields.",
  usage: "A command line the command does not accept (exit 2); the message names the option.",
  help: "`--help` was given: the help is printed and the command exits 0.",
  build_failed: "`opa check`, `opa build` or `opa test` failed; its output follows. Fix the policy or the data.",
  config:
    "An option of `portier serve` is missing, unknown or invalid (exit " +
    "2); each line names the option path and where the value came from.",
  start_failed:
    "The service could not start (a port in use, a missing file, " +
    "keys required at start); the line says what to change. Exit 1.",
  tracing_config:
    "An `OTEL_*` environment variable that tracing acts on has a value Portier cannot use (an endpoint that is not " +
    "an http(s) URL, a protocol other than `http/protobuf`, an unknown sampler, a ratio outside 0 to 1, an " +
    "exporter other than `otlp` or `none`). The line names the " +
    "variable and what to set; see docs/operating/tracing.md. Exit 1.",
  record_syntax_invalid:
    "A directory file is not valid JSON or NDJSON; the message " +
    "gives `file:line:column`. The previous directory keeps serving.",
  directory_invalid:
    "A directory file or feed is refused as a whole: no end record, too large, empty, " +
    "or shrinking more than `--directory-max-shrink`. The previous directory keeps serving.",
  fetch_failed:
    "A bundle, directory or key URL could not be fetched (the message has the " +
    "HTTP status or network error, URL secrets shown as `***`). Retried with back-off.",
  reload_refused:
    "A reload guard refused the new value (e.g. a directory " +
    "shrink); the message says which guard and how to accept it.",
  log_rules_reads_failed:
    "`portier bundle build` could not ask `opa deps` which parts of a decision " +
    "log event the `portier.log` rules read; its output follows. Fix the policy.",
  decision_log_mask_invalid:
    "The bundle's decision-log rules (`portier.log`) answered something other than a set of JSON pointers under " +
    "`/input` or `/result` (or upserts), or a `drop` that is not a boolean. The event is " +
    'dropped and counted (`portier_decision_logs_dropped_total{reason="rule_error"}`); fix the rule.',
  decision_log_token_file:
    "`--decision-log-token-file` cannot be read, is empty, or holds more than one bearer token. At " +
    "start the service exits 2; a bad change later keeps the previous token and `/ready` lists the problem.",
  scim_error:
    "A SCIM request was refused, answered as RFC 7644 section 3.12 writes it: `status`, `scimType` where RFC 7644 " +
    "has one (`invalidFilter`, `uniqueness`, `invalidValue`, `invalidSyntax`, `mutability`, `invalidPath`, " +
    "`noTarget`) and a `detail` naming the field or option at fault. A 503 (the de-provisioning " +
    "guard, or the store unavailable) carries Retry-After and applied nothing; see docs/scim.md.",
  scim_journal_invalid:
    "`--scim-journal` cannot be read or written, or a line before its last is not a journal step (a damaged file). " +
    "At start the service exits 2 naming the line rather than lose " +
    "a change; a failed write later answers 503 and applies nothing.",
  file_refused: "The family of the two codes below: a file named by an option was refused before it was read.",
  file_not_regular:
    "A file named by an option (`--bundle`, `--jwks`, `--directory`, `--config`, `--verification-key`, " +
    "`--decision-log-token-file`) is a device, a FIFO, a socket or a folder; Portier reads regular files " +
    "only (a link to one counts). At start the service exits 2; at a reload the previous one keeps serving.",
  file_too_large:
    "A file named by an option is larger than its bound " +
    "(`docs/operating/limits.md` lists each); the file is not read past it.",
  bundle_stale:
    "A review command found `build/bundle.tar.gz` built from other sources than today's `data/` and " +
    "`policies/` (compared by content). Run `make build`, or pass `--bundle` or `--source` explicitly.",
  policy_source_invalid:
    "A review command could not build or read the policy source it was given (a " +
    "folder, a git revision or a bundle); the message names the file and the reason.",
  revision_invalid:
    "`portier bundle build --rev` (or a review command) was given a git revision that " +
    "names no commit of the project's repository, or a commit without `policies/` and `data/`.",
  project_invalid:
    "A command was given `--project DIR` (or `portier init --tests DIR`) naming a folder that is no policy " +
    "project: it has no `data/routes.json`. `portier init DIR` makes one.",
  review_source:
    "`portier review` could not make one of its two sides: a revision, folder or " +
    "bundle not found, or a side whose data or policies do not build; the message names which.",
  sample_data_invalid:
    "The local issuer's sample data (`data/sample/`) fails its schema; the message names the file and the path.",
  // The local development issuer's OAuth errors (RFC 6749), shown to a client of `portier issuer` or `portier dev`.
  oauth_error: "The family of the local issuer's OAuth errors below (development only).",
  invalid_client: "The local issuer: unknown client or wrong client secret.",
  invalid_grant:
    "The local issuer: the authorization code is unknown, used or expired, or the PKCE verifier does not match.",
  unauthorized_client: "The local issuer: the client may not use this grant type.",
  unsupported_grant_type: "The local issuer: a grant type it does not implement.",
  invalid_scope: "The local issuer: a scope the client may not request.",
  unsupported_response_type: "The local issuer: only `response_type=code` is supported.",
  access_denied: "The local issuer: the user refused, or the login failed.",
  login_required: "The local issuer: `prompt=none` without a signed-in user.",
  server_error: "The local issuer failed; its log says why.",
  invalid_token:
    "The local issuer's userinfo: the access token is missing, invalid or expired. The AuthZEN endpoints (401): " +
    "the PEP's credential is neither the `--authzen-pep-key-file` key nor a valid access token; no decision is made.",
  insufficient_scope:
    "The local issuer's userinfo: the token lacks the `openid` scope. The AuthZEN " +
    "endpoints (403): a verified access token of a client not in `--authzen-pep-clients`.",
};
