package portier.tenancy_test

import data.portier.tenancy

tenants := [
	{"tenant_id": "tA", "codeOrganisme": ["A1", "A2"]},
	{"tenant_id": "tB", "codeOrganisme": ["B1"]},
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
	["tA", "/v2/a1/centres", true],
]

token_of(tenant) := {} if tenant == null

else := {"tenant_id": tenant}

mismatch_of(tenant, path) if {
	tenancy.mismatch with input as {"token": token_of(tenant), "path": path} with data.catalog.tenants as tenants
} else := false

test_binding_table[[tenant, path]] if {
	some [tenant, path, mismatch] in binding_cases
	mismatch_of(tenant, path) == mismatch
}

test_no_binding_without_mapping if {
	not tenancy.mismatch with input as {"token": {"tenant_id": "tA"}, "path": "/v2/B1/centres"} with data.catalog.tenants as []
}

test_message_names_code_and_tenant if {
	m := tenancy.message with input as {"token": {}, "path": "/v2/A1/centres"} with data.catalog.tenants as tenants
	m == "codeOrganisme A1 does not belong to the caller's tenant (none)"
}
