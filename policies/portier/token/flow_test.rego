package portier.token_test

import data.portier.fixture
import data.portier.token

# Spec 2.2 (accessCode) and 2.3 (application) claim sets, and shapes that are neither.
user := {"sub": "5f1c", "auth_time": 1700000000, "idp": "local", "scope": ["openid", "apiclients"], "tenant_id": "t1"}

client := {"client_id": "m", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": "t1"}

flow_cases := [
	{"name": "user token", "token": user, "flow": "accessCode"},
	{
		"name": "user token with aud (tolerated)",
		"token": object.union(user, {"aud": ["apiclients"]}),
		"flow": "accessCode",
	},
	{"name": "client credentials token", "token": client, "flow": "application"},
	{"name": "ID token (nonce)", "token": object.union(user, {"nonce": "n"}), "flow": null},
	{"name": "ID token (at_hash)", "token": object.union(user, {"at_hash": "h"}), "flow": null},
	{"name": "ID token (s_hash)", "token": object.union(user, {"s_hash": "h"}), "flow": null},
	{"name": "client token shaped like ID token", "token": object.union(client, {"nonce": "n"}), "flow": null},
	{"name": "user without auth_time", "token": object.remove(user, ["auth_time"]), "flow": null},
	{"name": "user without idp", "token": object.remove(user, ["idp"]), "flow": null},
	{"name": "user with empty idp", "token": object.union(user, {"idp": ""}), "flow": null},
	{"name": "empty sub is no subject", "token": object.union(client, {"sub": ""}), "flow": "application"},
	{"name": "client without aud apiclients", "token": object.union(client, {"aud": ["other"]}), "flow": null},
	{"name": "client without scope apiclients", "token": object.union(client, {"scope": ["openid"]}), "flow": null},
	{"name": "apiclients only as substring", "token": object.union(client, {"scope": ["apiclientsx"]}), "flow": null},
	{"name": "empty token", "token": {}, "flow": null},
]

default _flow_of(_) := null

_flow_of(t) := flow if {
	flow := token.flow with input as {"token": t} with data.catalog as fixture.catalog
}

test_flow_classification[c.name] if {
	some c in flow_cases
	_flow_of(c.token) == c.flow
}

shape_cases := [
	{"token": object.union(user, {"nonce": "n"}), "says": "ID token"},
	{"token": object.remove(user, ["idp"]), "says": "auth_time and idp"},
	{"token": {}, "says": "neither a user token"},
]

test_shape_problem_explains_why[c.says] if {
	some c in shape_cases
	contains(token.shape_problem, c.says) with input as {"token": c.token} with data.catalog as fixture.catalog
}

# A user named by an AuthZEN PEP: the token facts are the directory record's, the subject the PEP's.
named := {"sub": "5f1c", "tenant_id": "t1"}

test_named_by_pep_is_a_user if {
	token.flow == "accessCode" with input as {"token": named, "authzen": {"subject": {"id": "5f1c"}}} with data.catalog as fixture.catalog
	token.named_by_pep with input as {"token": named, "authzen": {"subject": {"id": "5f1c"}}} with data.catalog as fixture.catalog
	not token.named_by_pep with input as {"token": named, "authzen": {"subject": {"id": "other"}}} with data.catalog as fixture.catalog
	not token.named_by_pep with input as {"token": named} with data.catalog as fixture.catalog
	not token.flow with input as {"token": named} with data.catalog as fixture.catalog
}

test_scope_check if {
	token.has_application_scope with input as {"token": user} with data.catalog as fixture.catalog
	not token.has_application_scope with input as {"token": object.union(user, {"scope": ["openid"]})} with data.catalog as fixture.catalog
}
