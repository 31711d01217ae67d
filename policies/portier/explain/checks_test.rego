package portier.explain_test

import data.portier.explain
import data.portier.fixture
import data.portier.todo_fixture_test as todo

tenant_a := "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01"

user := {"sub": "u1", "auth_time": 1700000000, "idp": "local", "scope": ["openid", "apiclients"], "tenant_id": tenant_a}

machine := {"client_id": "m1", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": tenant_a}

_request(method, path, token, roles) := {
	"method": method, "path": path, "token": token,
	"roles": roles, "synced": true, "role_check": "enforce",
}

# name: [request, outcomes of token shape, route, method, organisation code, scope, tenant binding, role list]
cases := {
	"teacher on absences": [
		_request("GET", "/v2/ORG001/elevesJeunes/J1/absences", user, ["enseignant_jeune"]),
		["pass", "pass", "pass", "pass", "pass", "pass", "pass"],
	],
	"machine on a route without codeOrganisme": [
		_request("GET", "/v1/roles", machine, []),
		["pass", "pass", "pass", "not_applicable", "not_applicable", "not_applicable", "not_applicable"],
	],
	"every failure at once (but the method's: without an entry there is no role list)": [
		_request("GET", "/v2/ORG002/elevesJeunes", object.union(user, {"scope": ["openid"]}), ["eleve_jeune"]),
		["pass", "pass", "pass", "pass", "fail", "fail", "fail"],
	],
	"a method the route does not answer: no role list applies": [
		_request("POST", "/v2/ORG002/elevesJeunes", object.union(user, {"scope": ["openid"]}), ["eleve_jeune"]),
		["pass", "pass", "fail", "pass", "fail", "fail", "not_applicable"],
	],
	"ID token on an unknown route": [
		_request("POST", "/v9/nothing", object.union(user, {"nonce": "n"}), []),
		["fail", "fail", "not_applicable", "not_applicable", "not_applicable", "not_applicable", "not_applicable"],
	],
	"machine on a code that is not one": [
		_request("GET", "/v2/ORG002./centres", machine, []),
		["pass", "pass", "pass", "fail", "not_applicable", "fail", "not_applicable"],
	],
}

test_each_check_has_its_own_outcome[name] if {
	some name, c in cases
	[r.outcome | some r in explain.checks] == c[1] with input as c[0] with data.catalog as fixture.catalog
}

test_checks_are_named_in_decision_order if {
	names := [r.check | some r in explain.checks] with input as _request("GET", "/v1/roles", machine, []) with data.catalog as fixture.catalog
	names == ["token shape", "route", "method", "organisation code", "apiclients scope", "tenant binding", "role list"]
}

test_failures_carry_the_decision_reasons if {
	reasons := [r.reason | some r in explain.checks; r.outcome == "fail"] with input as cases["every failure at once (but the method's: without an entry there is no role list)"][0] with data.catalog as fixture.catalog
	reasons == ["scope_missing", "tenant_mismatch", "role_not_allowed"]
}

# [method, path, roles] -> the method check's outcome and message, on the Todo fixture (writes, one entry per method)
method_cases := [
	["GET", "/todos", ["viewer"], "pass", "/todos answers GET (a read)"],
	["POST", "/todos", ["viewer"], "pass", "/todos answers POST (a write)"],
	[
		"PATCH", "/todos/t1", ["admin"], "fail",
		"method PATCH is not allowed on /todos/{todoId}: no entry of this route for PATCH (it answers DELETE, PUT)",
	],
	["PUT", "/nothing", ["admin"], "not_applicable", "no route matched, so no method applies"],
]

test_method_check_names_route_and_method[[method, path]] if {
	some [method, path, roles, outcome, message] in method_cases
	[check] := [r | some r in explain.checks; r.check == "method"] with input as _request(method, path, user, roles)
		with data.catalog as todo.catalog
	[check.outcome, check.message] == [outcome, message]
}

test_role_list_of_a_method_without_entry if {
	[check] := [r | some r in explain.checks; r.check == "role list"] with input as _request("PATCH", "/todos", user, [])
		with data.catalog as todo.catalog
	check == {
		"check": "role list", "outcome": "not_applicable", "reason": "",
		"message": "no entry of the route for PATCH, so no role list applies",
	}
}
