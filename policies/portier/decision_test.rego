package portier_test

import data.portier

tenant_a := "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01"

user_token := {"sub": "u1", "auth_time": 1700000000, "idp": "local", "scope": ["openid", "apiclients"], "tenant_id": tenant_a}

client_token := {"client_id": "m1", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": tenant_a}

request(method, path, token, roles, synced) := {"method": method, "path": path, "token": token, "roles": roles, "synced": synced, "role_check": "enforce"}

decide(req) := d if {
	d := portier.decision with input as req
}

# One row per denial reason (and the allows around them): [name, request, allow, status, reason, deprecated]
reason_cases := [
	["teacher on absences", request("GET", "/v2/ORG001/elevesJeunes/J1/absences", user_token, ["enseignant_jeune"], true), true, 200, "allowed", true],
	["HEAD is a read", request("HEAD", "/v1/roles", user_token, [], true), true, 200, "allowed", true],
	["machine anywhere", request("GET", "/v2/ORG001/elevesJeunes/J1/absences", client_token, [], false), true, 200, "allowed", false],
	["ID token", request("GET", "/v1/roles", object.union(user_token, {"nonce": "n", "at_hash": "h"}), [], true), false, 401, "token_shape_unknown", false],
	["no shape", request("GET", "/v1/roles", {"scope": ["apiclients"]}, [], true), false, 401, "token_shape_unknown", false],
	["POST", request("POST", "/v1/roles", client_token, [], false), false, 403, "method_not_allowed", false],
	["DELETE by a user", request("DELETE", "/v1/roles", user_token, [], true), false, 403, "method_not_allowed", false],
	["unknown route, user", request("GET", "/v9/nothing", user_token, ["enseignant_jeune"], true), false, 403, "route_unknown", false],
	["unknown route, machine", request("GET", "/v9/nothing", client_token, [], false), false, 403, "route_unknown", false],
	["user without apiclients scope", request("GET", "/v1/roles", object.union(user_token, {"scope": ["openid"]}), [], true), false, 403, "scope_missing", false],
	["user of tenant A on ORG002", request("GET", "/v2/ORG002/centres", user_token, [], true), false, 403, "tenant_mismatch", false],
	["machine of tenant A on ORG002", request("GET", "/v2/ORG002/centres", client_token, [], false), false, 403, "tenant_mismatch", false],
	["machine of tenant A on org002 (case)", request("GET", "/v2/org002/centres", client_token, [], false), false, 403, "tenant_mismatch", false],
	["machine of tenant A on its own code in lower case", request("GET", "/v2/org001/centres", client_token, [], false), true, 200, "allowed", false],
	["machine on a code that is not one", request("GET", "/v2/ORG002./centres", client_token, [], false), false, 403, "path_invalid", false],
	["malformed code before scope", request("GET", "/v2/ORG;2/centres", object.union(user_token, {"scope": ["openid"]}), [], true), false, 403, "path_invalid", false],
	["pupil on teacher route", request("GET", "/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true), false, 403, "role_not_allowed", true],
	["unsynced on all-synced route", request("GET", "/v2/ORG001/centres", user_token, [], false), false, 403, "not_synced", true],
]

test_each_reason[name] if {
	some [name, req, allow, status, reason, deprecated] in reason_cases
	d := decide(req)
	[d.allow, d.status, d.reason, d.deprecated] == [allow, status, reason, deprecated]
}

test_decision_document_shape if {
	d := decide(request("GET", "/v2/ORG001/elevesJeunes/J1/absences", user_token, ["enseignant_jeune"], true))
	d.flow == "accessCode"
	d.mode == "enforce"
	d.would_deny == null
	d.route == {"product": "Élève", "api": "Absences d'un élève jeune", "template": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences", "parameters": {"codeOrganisme": "ORG001", "idEleveJeune": "J1"}}
	d.message == "user role enseignant_jeune is allowed on /v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences"
}

test_unknown_route_and_shape_have_null_route_or_flow if {
	decide(request("GET", "/v9/x", client_token, [], false)).route == null
	decide(request("GET", "/v1/roles", {}, [], false)).flow == null
	decide(request("GET", "/v1/roles", client_token, [], false)).message == "application tokens are not role-restricted"
}

test_audit_mode_allows_and_reports_the_role_check if {
	req := object.union(request("GET", "/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true), {"role_check": "audit"})
	d := decide(req)
	d.allow
	d.status == 200
	d.mode == "audit"
	d.deprecated
	d.would_deny.reason == "role_not_allowed"
	startswith(d.message, "audit mode: would deny")
}

test_audit_mode_keeps_other_denials if {
	d := decide(object.union(request("GET", "/v2/ORG002/centres", user_token, [], true), {"role_check": "audit"}))
	d.reason == "tenant_mismatch"
	d.would_deny == null
	not d.allow
}

test_audit_mode_passing_role_check_has_no_would_deny if {
	d := decide(object.union(request("GET", "/v1/roles", user_token, [], true), {"role_check": "audit"}))
	d.allow
	d.would_deny == null
}

test_unknown_mode_is_enforce if {
	d := decide(object.union(request("GET", "/v2/ORG001/elevesJeunes", user_token, ["eleve_jeune"], true), {"role_check": "lenient"}))
	d.mode == "enforce"
	not d.allow
}
