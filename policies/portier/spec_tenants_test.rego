package portier_spec_tenants_test

# The spec project's sample tenant bindings (data/tenants.json) written out, so that moving a code to another
# tenant fails `opa test`, as a change of the route table fails spec_table_test.rego. Like that oracle, it belongs
# to the spec's project and runs with its data only (src/toolchain/project.ts).
import data.portier

tenant_a := "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01"

tenant_b := "7b2e9d14-6c3a-4f5e-8a1b-2c4d6e8f0a13"

# code -> the tenant it belongs to
owners := {"ORG001": tenant_a, "ORG002": tenant_b}

_request(code, tenant) := {
	"method": "GET", "path": concat("", ["/v2/", code, "/centres"]),
	"token": {"client_id": "m", "aud": ["apiclients"], "scope": ["apiclients"], "tenant_id": tenant},
	"roles": [], "synced": false, "role_check": "enforce",
}

test_each_code_belongs_to_its_tenant[[code, tenant]] if {
	some code, owner in owners
	some tenant in [tenant_a, tenant_b]
	d := portier.decision with input as _request(code, tenant)
	expected := tenant == owner
	d.allow == expected
}
