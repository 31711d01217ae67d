package portier.tenancy_test

import data.portier.fixture
import data.portier.tenancy

tenants := [
	{"tenant_id": "tA", "codeOrganisme": ["A1", "A2"]},
	{"tenant_id": "tB", "codeOrganisme": ["B1"]},
	{"tenant_id": "tC", "codeOrganisme": ["c1"]},
]

# [tenant_id of the caller (null: none), path, mismatch expected]
binding_cases := [
	["tA", "/v2/A1/centres", false],
	["tA", "/v2/A2/centres", false],
	["tA", "/v2/B1/centres", true],
	["tA", "/v2/Z9/centres", true],
	["tZ", "/v2/B1/centres", true],
	["tZ", "/v2/Z9/centres", false],
	[null, "/v2/A1/centres", true],
	[null, "/v2/Z9/centres", false],
	["tA", "/v1/roles", false],
	["tA", "/v2/ecoles/B1", false],
	# codes compare case-insensitively, on both sides (issue 9, item 8)
	["tA", "/v2/a1/centres", false],
	["tA", "/v2/b1/centres", true],
	["tB", "/v2/b1/centres", false],
	["tZ", "/v2/b1/centres", true],
	["tZ", "/v2/bB1/centres", false],
	[null, "/v2/a1/centres", true],
	["tC", "/v2/C1/centres", false],
	["tZ", "/v2/C1/centres", true],
	["tA", "/v2/C1/centres", true],
]

test_binding_table[[tenant, path]] if {
	some [tenant, path, mismatch] in binding_cases
	_mismatch_of(tenant, path) == mismatch
}

# [codeOrganisme as it stands in the (already normalised) path, refused as malformed]
code_cases := [
	["ORG002", false],
	["org002", false],
	["Org-002_x", false],
	["0", false],
	["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false],
	["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", true],
	["ORG002.", true],
	["ORG002;x", true],
	["ORG 002", true],
	["ＯRG002", true],
	["ORGı02", true],
	["ORG%02", true],
	["écoles", true],
]

test_code_alphabet_table[code] if {
	some [code, malformed] in code_cases
	path := concat("", ["/v2/", code, "/centres"])
	tenancy.code_malformed == malformed with input as {"token": {}, "path": path} with data.catalog as fixture.catalog
}

test_no_code_no_code_check if {
	not tenancy.code_malformed with input as {"token": {}, "path": "/v1/roles"} with data.catalog as fixture.catalog
}

test_malformed_message_names_the_code if {
	m := tenancy.malformed_message with input as {"token": {}, "path": "/v2/ORG002./centres"} with data.catalog as fixture.catalog
	m == "codeOrganisme \"ORG002.\" is not an organisation code: ASCII letters, digits, \"-\" and \"_\" only, at most 64"
}

# [tenant_id of the caller (null: none), path, the exact message]
message_cases := [
	[null, "/v2/A1/centres", "codeOrganisme A1 does not belong to the caller's tenant (none)"],
	["tB", "/v2/a1/centres", "codeOrganisme a1 does not belong to the caller's tenant tB"],
]

test_message_names_code_and_tenant[[tenant, path]] if {
	some [tenant, path, message] in message_cases
	m := tenancy.message with input as {"token": _token_of(tenant), "path": path} with data.catalog as fixture.catalog
		with data.catalog.tenant_index as _index_of(tenants)
	m == message
}

test_no_binding_without_mapping if {
	not tenancy.mismatch with input as {"token": {"tenant_id": "tA"}, "path": "/v2/B1/centres"} with data.catalog as fixture.catalog
		with data.catalog.tenant_index as _index_of([])
}

# The index src/catalog builds is what these tests build from the same tenants.
test_bundled_index_is_the_index_of_the_tenants if {
	data.catalog.tenant_index == _index_of(data.catalog.tenants)
}

_index_of(listed_tenants) := {
	"owners": {lower(code): t.tenant_id | some t in listed_tenants; some code in t.codeOrganisme},
	"spellings": {code: true | some t in listed_tenants; some code in t.codeOrganisme},
	"listed": {t.tenant_id: true | some t in listed_tenants},
}

_token_of(null) := {}

_token_of(tenant) := {"tenant_id": tenant} if tenant != null

default _mismatch_of(_, _) := false

_mismatch_of(tenant, path) if {
	tenancy.mismatch with input as {"token": _token_of(tenant), "path": path} with data.catalog as fixture.catalog
		with data.catalog.tenant_index as _index_of(tenants)
}

# A route template asked about by an AuthZEN PEP binds no organisation: no malformed code, no mismatch.
test_template_binds_no_organisation if {
	template := "/v2/{codeOrganisme}/centres"
	asked := {"token": {"tenant_id": "tA"}, "path": template, "authzen": {"resource": {"id": template}}}
	not tenancy.code_malformed with input as asked with data.catalog as fixture.catalog
	not tenancy.mismatch with input as asked with data.catalog.tenant_index as _index_of(tenants)
	tenancy.code_malformed with input as object.remove(asked, ["authzen"]) with data.catalog as fixture.catalog
}
