package portier_test

import data.portier
import data.portier.fixture
import data.portier.todo_fixture_test as todo

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
	["POST on no route", _request("POST", "/v9/nothing", client_token, [], false), false, 403, "route_unknown", false],
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
	d := _fixture_decide(req)
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
	d := _fixture_decide(req)
	{key: d[key] | some key, _ in fields} == fields
}

# The Todo fixture: every method of every route, for each role alone, an application token and a synced user
# without roles. [method, path] -> the callers allowed ("viewer", "editor", "admin", "synced", "application").
todo_cases := [
	["GET", "/users/u1", {"viewer", "editor", "admin", "application"}],
	["HEAD", "/users/u1", {"viewer", "editor", "admin", "application"}],
	["GET", "/todos", {"viewer", "editor", "admin", "application"}],
	["HEAD", "/todos", {"viewer", "editor", "admin", "synced", "application"}],
	["OPTIONS", "/todos", {"viewer", "editor", "admin", "synced", "application"}],
	["POST", "/todos", {"editor", "admin", "application"}],
	["PUT", "/todos/t1", {"editor", "admin", "application"}],
	["DELETE", "/todos/t1", {"admin", "application"}],
	["PATCH", "/todos/t1", set()],
	["GET", "/todos/t1", set()],
	["POST", "/users/u1", set()],
	["OPTIONS", "/users/u1", set()],
]

todo_callers := {
	"viewer": [user_token, ["viewer"], true],
	"editor": [user_token, ["editor"], true],
	"admin": [user_token, ["admin"], true],
	"synced": [user_token, [], true],
	"application": [client_token, [], false],
}

test_todo_per_method[[method, path, caller]] if {
	some [method, path, allowed] in todo_cases
	some caller, [token, roles, synced] in todo_callers
	d := portier.decision with input as _request(method, path, token, roles, synced) with data.catalog as todo.catalog
	d.allow == _listed(caller, allowed)
	d.reason in {"allowed", "role_not_allowed", "not_synced", "method_not_allowed"}
}

default _listed(_, _) := false

_listed(caller, callers) if caller in callers

# The decision's route is the entry answering the method; a method without entry is named with the route's methods.
todo_document_cases := {
	"editor creates a todo": [
		_request("POST", "/todos", user_token, ["editor"], false),
		{
			"allow": true, "reason": "allowed",
			"route": {"product": "Todo", "api": "Todos", "template": "/todos", "parameters": {}},
			"message": "user role editor is allowed on /todos",
		},
	],
	"viewer may not create one": [
		_request("POST", "/todos", user_token, ["viewer"], false),
		{
			"allow": false, "status": 403, "reason": "role_not_allowed",
			"message": "none of the caller's roles [viewer] may call /todos (allowed: editor, admin)",
		},
	],
	"nobody patches": [
		_request("PATCH", "/todos/t1", client_token, [], false),
		{
			"allow": false, "status": 403, "reason": "method_not_allowed",
			"route": {"product": "Todo", "api": "Todo", "template": "/todos/{todoId}", "parameters": {"todoId": "t1"}},
			"message": "method PATCH is not allowed on /todos/{todoId}: no entry of this route for PATCH (it answers DELETE, PUT)",
		},
	],
}

test_todo_decision_document[name] if {
	some name, [req, fields] in todo_document_cases
	d := portier.decision with input as req with data.catalog as todo.catalog
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

# Under the loaded project's data, whichever it is, a token of no flow is refused before any other check.
test_no_flow_is_refused_under_any_data if {
	d := _decide(_get("/any/path", {}, [], false))
	[d.allow, d.status, d.reason] == [false, 401, "token_shape_unknown"]
}

# The decision under the loaded project's data (the spec's oracle, spec_table_test.rego, asks through it).
_decide(req) := d if {
	d := portier.decision with input as req
}

# The decision under the fixture catalog: the shared policy's own tests, whichever project's data is loaded.
_fixture_decide(req) := d if {
	d := portier.decision with input as req with data.catalog as fixture.catalog
}
