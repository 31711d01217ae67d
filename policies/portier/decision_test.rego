package portier_test

import data.portier

tenant_a := "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01"

user_token := {
	"sub": "u1", "auth_time": 1700000000, "idp": "local",
	"scope": ["openid", "apiclients"], "tenant_id": tenant_a,
}

client_token := {"client_id": "m1", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": tenant_a}

absences := "/v2/ORG001/elevesJeunes/J1/absences"

# One row per denial reason (and the allows around them): [name, request, allow, status, reason, deprecated]
reason_cases := [
	["teacher on absences", _get(absences, user_token, ["enseignant_jeune"], true), true, 200, "allowed", true],
	["HEAD is a read", _request("HEAD", "/v1/roles", user_token, [], true), true, 200, "allowed", true],
	["machine anywhere", _get(absences, client_token, [], false), true, 200, "allowed", false],
	[
		"ID token", _get("/v1/roles", object.union(user_token, {"nonce": "n", "at_hash": "h"}), [], true),
		false, 401, "token_shape_unknown", false,
	],
	["no shape", _get("/v1/roles", {"scope": ["apiclients"]}, [], true), false, 401, "token_shape_unknown", false],
	["POST", _request("POST", "/v1/roles", client_token, [], false), false, 403, "method_not_allowed", false],
	["DELETE by a user", _request("DELETE", "/v1/roles", user_token, [], true), false, 403, "method_not_allowed", false],
	[
		"unknown route, user", _get("/v9/nothing", user_token, ["enseignant_jeune"], true),
		false, 403, "route_unknown", false,
	],
	["unknown route, machine", _get("/v9/nothing", client_token, [], false), false, 403, "route_unknown", false],
	[
		"user without apiclients scope", _get("/v1/roles", object.union(user_token, {"scope": ["openid"]}), [], true),
		false, 403, "scope_missing", false,
	],
	["user of tenant A on ORG002", _get("/v2/ORG002/centres", user_token, [], true), false, 403, "tenant_mismatch", false],
	[
		"machine of tenant A on ORG002", _get("/v2/ORG002/centres", client_token, [], false),
		false, 403, "tenant_mismatch", false,
	],
	[
		"machine of tenant A on org002 (case)", _get("/v2/org002/centres", client_token, [], false),
		false, 403, "tenant_mismatch", false,
	],
	[
		"machine of tenant A on its own code in lower case", _get("/v2/org001/centres", client_token, [], false),
		true, 200, "allowed", false,
	],
	[
		"machine on a code that is not one", _get("/v2/ORG002./centres", client_token, [], false),
		false, 403, "path_invalid", false,
	],
	[
		"malformed code before scope", _get("/v2/ORG;2/centres", object.union(user_token, {"scope": ["openid"]}), [], true),
		false, 403, "path_invalid", false,
	],
	[
		"pupil on teacher route", _get("/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true),
		false, 403, "role_not_allowed", true,
	],
	["unsynced on all-synced route", _get("/v2/ORG001/centres", user_token, [], false), false, 403, "not_synced", true],
	# A user named by an AuthZEN PEP: no token, so no scope to check; the role list and the binding still apply.
	["named by a PEP", _named(absences, ["enseignant_jeune"]), true, 200, "allowed", true],
	["named by a PEP, pupil", _named(absences, ["eleve_jeune"]), false, 403, "role_not_allowed", true],
	["named by a PEP, other tenant", _named("/v2/ORG002/centres", []), false, 403, "tenant_mismatch", false],
	[
		"PEP asks about a template",
		_named("/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences", ["enseignant_jeune"]),
		true, 200, "allowed", true,
	],
	["PEP asks about a template, POST", _named_call("POST", "/v1/roles", []), false, 403, "method_not_allowed", false],
]

test_each_reason[name] if {
	some [name, req, allow, status, reason, deprecated] in reason_cases
	d := _decide(req)
	[d.allow, d.status, d.reason, d.deprecated] == [allow, status, reason, deprecated]
}

# name -> [request, the fields of the decision document it must hold]
document_cases := {
	"user allowed by role": [
		_get(absences, user_token, ["enseignant_jeune"], true),
		{
			"flow": "accessCode", "mode": "enforce", "would_deny": null,
			"route": {
				"product": "Élève", "api": "Absences d'un élève jeune",
				"template": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
				"parameters": {"codeOrganisme": "ORG001", "idEleveJeune": "J1"},
			},
			"message": "user role enseignant_jeune is allowed on /v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
		},
	],
	"unknown route": [_get("/v9/x", client_token, [], false), {"route": null, "flow": "application"}],
	"no flow": [_get("/v1/roles", {}, [], false), {"flow": null, "route": {
		"product": "identity platform", "api": "Rôles", "template": "/v1/roles", "parameters": {},
	}}],
	"machine": [
		_get("/v1/roles", client_token, [], false),
		{"message": "application tokens are not role-restricted", "deprecated": false, "would_deny": null},
	],
	"audit mode, failed role check": [
		_audit(_get("/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true)),
		{
			"allow": true, "status": 200, "reason": "allowed", "mode": "audit", "deprecated": true,
			"would_deny": {"reason": "role_not_allowed", "message": concat("", [
				"none of the caller's roles [eleve_jeune] may call /v2/{codeOrganisme}/elevesJeunes",
				" (allowed: directeur_jeune, intervenant_jeune, enseignant_jeune)",
			])},
			"message": concat("", [
				"audit mode: would deny (none of the caller's roles [eleve_jeune] may call ",
				"/v2/{codeOrganisme}/elevesJeunes (allowed: directeur_jeune, intervenant_jeune, enseignant_jeune))",
			]),
		},
	],
	"audit mode keeps other denials": [
		_audit(_get("/v2/ORG002/centres", user_token, [], true)),
		{"allow": false, "reason": "tenant_mismatch", "mode": "audit", "would_deny": null},
	],
	# would_deny only when the role check was reached (issue 17 item 9): not for application tokens, which
	# are not role-restricted, nor after an earlier denial, even when the roles would fail the check too.
	# Methods are compared upper-case (issue 17 item 9): a lower-case GET is a GET, a lower-case DELETE a DELETE.
	"lower-case get": [_request("get", "/v1/roles", client_token, [], false), {"allow": true}],
	"mixed-case Head": [_request("Head", "/v1/roles", client_token, [], false), {"allow": true}],
	"lower-case delete": [_request("delete", "/v1/roles", client_token, [], false), {"allow": false, "reason": "method_not_allowed"}],
	"audit mode, application token on a role-listed route": [
		_audit(_get("/v2/ORG001/elevesJeunes", client_token, [], false)),
		{"allow": true, "reason": "allowed", "mode": "audit", "deprecated": false, "would_deny": null},
	],
	"audit mode, tenant mismatch and failing roles": [
		_audit(_get("/v2/ORG002/elevesJeunes", user_token, ["eleve_jeune"], true)),
		{"allow": false, "reason": "tenant_mismatch", "mode": "audit", "deprecated": false, "would_deny": null},
	],
	"audit mode, passing role check": [
		_audit(_get("/v1/roles", user_token, [], true)),
		{"allow": true, "mode": "audit", "deprecated": true, "would_deny": null},
	],
	"unknown mode is enforce": [
		object.union(_get("/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true), {"role_check": "lenient"}),
		{"allow": false, "status": 403, "reason": "role_not_allowed", "mode": "enforce", "would_deny": null},
	],
}

test_decision_document[name] if {
	some name, [req, fields] in document_cases
	d := _decide(req)
	{key: d[key] | some key, _ in fields} == fields
}

_request(method, path, token, roles, synced) := {
	"method": method, "path": path, "token": token,
	"roles": roles, "synced": synced, "role_check": "enforce",
}

_get(path, token, roles, synced) := _request("GET", path, token, roles, synced)

_audit(req) := object.union(req, {"role_check": "audit"})

# A user named by an AuthZEN PEP: token facts from the directory record (sub, tenant), the AuthZEN request beside.
_named(path, roles) := _named_call("GET", path, roles)

_named_call(method, path, roles) := object.union(
	_request(method, path, {"sub": "u1", "tenant_id": tenant_a}, roles, true),
	{"authzen": {
		"subject": {"type": "user", "id": "u1"}, "action": {"name": method},
		"resource": {"type": "route", "id": path},
	}},
)

_decide(req) := d if {
	d := portier.decision with input as req
}
