# Optional organisation binding: data.catalog.tenants maps a tenant_id to its codeOrganisme values.
# A call whose {codeOrganisme} is not the caller's is a mismatch when either the caller's tenant or
# that code is listed. A route without {codeOrganisme}, or a tenant and code both unlisted, is not checked.
package portier.tenancy

import data.portier.routes

mismatch if {
	code := routes.match.parameters.codeOrganisme
	binding_applies(code)
	not caller_owns(code)
}

binding_applies(_) if caller_tenant_is_listed

binding_applies(code) if code_is_listed(code)

caller_tenant_is_listed if {
	some tenant in data.catalog.tenants
	tenant.tenant_id == input.token.tenant_id
}

code_is_listed(code) if {
	some tenant in data.catalog.tenants
	code in tenant.codeOrganisme
}

caller_owns(code) if {
	some tenant in data.catalog.tenants
	tenant.tenant_id == input.token.tenant_id
	code in tenant.codeOrganisme
}

message := concat("", [
	"codeOrganisme ", routes.match.parameters.codeOrganisme,
	" does not belong to the caller's tenant ", object.get(input.token, "tenant_id", "(none)"),
])
