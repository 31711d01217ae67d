package todo_test

import data.portier

# The decisions of the AuthZEN API-gateway interop scenario (openid/authzen,
# interop/authzen-api-gateways/test-harness/test/decisions.json): each user on each route and method, written
# here as our own table. The roles are the users' directory records (data/sample/directory.json).
roles := {
	"rick": ["admin", "evil_genius"],
	"morty": ["editor"],
	"summer": ["editor"],
	"beth": ["viewer"],
	"jerry": ["viewer"],
}

# [method, route as a request path, users allowed]
scenario := [
	["GET", "/users/rick@the-citadel.com", {"rick", "morty", "summer", "beth", "jerry"}],
	["GET", "/todos", {"rick", "morty", "summer", "beth", "jerry"}],
	["POST", "/todos", {"rick", "morty", "summer"}],
	["PUT", "/todos/7240d0db-8ff0-41ec-98b2-34a096273b91", {"rick", "morty", "summer"}],
	["DELETE", "/todos/7240d0db-8ff0-41ec-98b2-34a096273b91", {"rick", "morty", "summer"}],
]

user_token(name) := {"sub": name, "auth_time": 1700000000, "idp": "local"}

_request(method, path, token, user_roles) := {
	"method": method, "path": path, "token": token,
	"roles": user_roles, "synced": true, "role_check": "enforce",
}

test_interop_scenario[[method, path, name]] if {
	some [method, path, allowed] in scenario
	some name, user_roles in roles
	d := portier.decision with input as _request(method, path, user_token(name), user_roles)
	expected := name in allowed
	d.allow == expected
}

# Beyond the scenario: what the route table refuses, and why.
# [name, request, reason]
refusals := [
	["an unknown route", _request("GET", "/admin", user_token("rick"), roles.rick), "route_unknown"],
	["no role", _request("GET", "/todos", user_token("nobody"), []), "role_not_allowed"],
	[
		"an application token has no roles",
		_request("GET", "/todos", {"client_id": "m", "aud": ["apiclients"], "scope": ["apiclients"]}, []),
		"role_not_allowed",
	],
	["an ID token", _request("GET", "/todos", {"sub": "rick", "nonce": "n"}, roles.rick), "token_shape_unknown"],
	["a viewer writing", _request("POST", "/todos", user_token("beth"), roles.beth), "role_not_allowed"],
	["an evil genius deleting", _request("DELETE", "/todos/1", user_token("x"), ["evil_genius"]), "role_not_allowed"],
]

test_refusals[name] if {
	some [name, req, reason] in refusals
	d := portier.decision with input as req
	not d.allow
	d.reason == reason
}

test_no_decision_relies_on_a_deprecated_list if {
	d := portier.decision with input as _request("GET", "/todos", user_token("beth"), roles.beth)
	d.allow
	not d.deprecated
}
