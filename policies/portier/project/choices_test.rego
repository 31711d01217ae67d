package portier.project_test

import data.portier
import data.portier.catalog
import data.portier.explain
import data.portier.fixture
import data.portier.project
import data.portier.token

# A team's choices, unlike the spec's: both flows role-checked, no scope, only auth_time, no tenant binding.
team := {
	"role_checked_flows": ["accessCode", "application"],
	"user_token": {"claims": ["auth_time"], "scope": null},
	"tenant_binding": null,
	"role_list": {"name": "the team's role list", "deprecated": false},
}

# The spec's choices with the binding moved to another parameter.
bound_by_id_centre := object.union(fixture.catalog.project, {"tenant_binding": {"parameter": "idCentre"}})

user := {"sub": "u1", "auth_time": 1700000000, "tenant_id": "t-a"}

machine := {"client_id": "m1", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": "t-a"}

_request(path, tok, roles) := {
	"method": "GET", "path": path, "token": tok,
	"roles": roles, "synced": true, "role_check": "enforce",
}

# The service finds no directory record for an application token: never synced.
_machine(path) := object.union(_request(path, machine, []), {"synced": false})

_audit(req) := object.union(req, {"role_check": "audit"})

# name: [choices ({}: none declared), request, allow, reason, deprecated]
decision_cases := {
	"team: a user token needs no idp nor scope": [team, _request("/v1/roles", user, []), true, "allowed", false],
	"team: machine role-checked on a role list": [
		team, _machine("/v2/ORG002/elevesJeunes"),
		false, "role_not_allowed", false,
	],
	"team: machine role-checked on an all-synced route": [
		team, _machine("/v1/roles"),
		false, "not_synced", false,
	],
	"team: no tenant binding": [
		team, _request("/v2/ORG002/elevesJeunes", user, ["enseignant_adulte", "directeur_jeune"]),
		true, "allowed", false,
	],
	"no choices: every flow role-checked": [{}, _machine("/v1/roles"), false, "not_synced", false],
	"no choices: a user token needs idp": [{}, _request("/v1/roles", user, []), false, "token_shape_unknown", false],
	"no choices: no scope needed": [
		{}, _request("/v1/roles", object.union(user, {"idp": "local"}), []),
		true, "allowed", false,
	],
	"binding on another parameter": [
		bound_by_id_centre, _request("/v2/ORG002/centres/ORG002/programmes", machine, []),
		false, "tenant_mismatch", false,
	],
	"binding on another parameter leaves codeOrganisme free": [
		bound_by_id_centre, _request("/v2/ORG002/centres", machine, []),
		true, "allowed", false,
	],
}

_with_choices(choices, req) := d if {
	d := portier.decision with data.catalog as fixture.catalog with input as req with data.catalog.project as choices
}

test_decisions_follow_the_choices[name] if {
	some name, [choices, req, allow, reason, deprecated] in decision_cases
	d := _with_choices(choices, req)
	[d.allow, d.reason, d.deprecated] == [allow, reason, deprecated]
}

test_audit_reports_would_deny_without_a_deprecated_list if {
	d := portier.decision with data.catalog as fixture.catalog with input as _audit(_machine("/v1/roles")) with data.catalog.project as team
	d.allow
	d.would_deny.reason == "not_synced"
	not d.deprecated
}

# A team whose tokens name the subject uid and the tenant org, whose machines carry the audience todo-api and no
# particular scope (the service passes uid as input.token.sub: the policy names the claim in its reasons only).
own_tokens := object.union(team, {
	"claims": {"subject": "uid", "tenant": "org"},
	"application_token": {"audience": "todo-api", "scope": null},
})

_with_app(audience, scope) := object.union(team, {"application_token": {"audience": audience, "scope": scope}})

# name: [choices, token facts, flow (null: none), the reason it has none (null: it has one)]
token_shape_cases := {
	"own audience, no scope: a machine": [own_tokens, {"client_id": "m", "aud": ["todo-api"]}, "application", null],
	"own audience: the spec's is not enough": [
		own_tokens, machine, null,
		"neither a user token (uid, auth_time) nor a client token (aud todo-api, no uid)",
	],
	"own subject: a user": [own_tokens, user, "accessCode", null],
	"scope only": [
		_with_app(null, "batch"), {"aud": ["x"]}, null,
		"neither a user token (sub, auth_time) nor a client token (scope batch, no sub)",
	],
	"scope only, carried": [_with_app(null, "batch"), {"scope": ["batch"]}, "application", null],
	"audience and scope differ": [
		_with_app("api", "batch"), {"aud": ["api"]}, null,
		"neither a user token (sub, auth_time) nor a client token (aud api, scope batch, no sub)",
	],
	"neither required: any token without a subject": [_with_app(null, null), {"client_id": "m"}, "application", null],
	"neither required: an ID token is still none": [
		_with_app(null, null), {"nonce": "n"}, null,
		"an ID token is not an access token; call the API with the access token",
	],
}

_flow_of(choices, facts) := f if {
	f := token.flow with input as {"token": facts} with data.catalog.project as choices
} else := null

# The reason a token has no flow (shape_problem is read only then).
_problem_of(choices, facts) := p if {
	not token.flow with input as {"token": facts} with data.catalog.project as choices
	p := token.shape_problem with input as {"token": facts} with data.catalog.project as choices
} else := null

test_token_shapes_follow_the_choices[name] if {
	some name, [choices, facts, flow, problem] in token_shape_cases
	[_flow_of(choices, facts), _problem_of(choices, facts)] == [flow, problem]
}

test_own_claims_decide if {
	d := _with_choices(own_tokens, _request("/v1/roles", user, []))
	[d.allow, d.reason] == [true, "allowed"]
	m := _with_choices(own_tokens, _machine("/v1/roles"))
	[m.allow, m.reason] == [false, "token_shape_unknown"]
	m.message == "neither a user token (uid, auth_time) nor a client token (aud todo-api, no uid)"
}

test_defaults_deny_most if {
	project.subject_claim == "sub" with data.catalog.project as {}
	project.application_audience == "apiclients" with data.catalog.project as {}
	project.application_scope == "apiclients" with data.catalog.project as {}
	project.role_checked_flows == ["accessCode", "application"] with data.catalog.project as {}
	project.user_claims == ["auth_time", "idp"] with data.catalog.project as {}
	project.user_scope == null with data.catalog.project as {}
	project.tenant_parameter == null with data.catalog.project as {}
	not project.role_list_deprecated with data.catalog.project as {}
}

test_shape_problems_name_the_required_claims if {
	token.shape_problem == "a token with a subject must carry auth_time to be a user (accessCode) token" with data.catalog as fixture.catalog with input as {
		"token": {"sub": "u1"},
	}
		with data.catalog.project as team
	token.shape_problem == "neither a user token (sub, auth_time) nor a client token (aud, scope apiclients, no sub)" with data.catalog as fixture.catalog with input as {"token": {}}
		with data.catalog.project as team
}

# name: [choices, request, check name, outcome, message]
explain_cases := {
	"no scope required": [
		team, _request("/v1/roles", user, []), "user scope", "not_applicable",
		"the project requires no scope of user tokens",
	],
	"no binding": [
		team, _request("/v2/ORG002/centres", user, []), "tenant binding", "not_applicable",
		"the project binds no path parameter to tenants",
	],
	"machine not role-checked": [
		fixture.catalog.project, _machine("/v1/roles"), "role list", "not_applicable",
		"application calls are not role-restricted",
	],
	"no flow": [
		fixture.catalog.project, _request("/v1/roles", {}, []), "role list", "not_applicable",
		"no token flow, so no role list applies",
	],
	"user without the scope": [
		fixture.catalog.project, _request("/v1/roles", object.union(user, {"idp": "l", "scope": ["openid"]}), []),
		"apiclients scope", "fail", "a user token must carry the apiclients scope",
	],
}

test_explain_follows_the_choices[name] if {
	some name, [choices, req, check, outcome, message] in explain_cases
	checks := explain.checks with data.catalog as fixture.catalog with input as req with data.catalog.project as choices
	some c in checks
	c.check == check
	[c.outcome, c.message] == [outcome, message]
}

test_catalog_names_the_role_list if {
	catalog.role_list == {"name": "the team's role list", "deprecated": false} with data.catalog.project as team
	catalog.role_list == {"name": "the role list of the route table", "deprecated": false} with data.catalog.project as {}
}
