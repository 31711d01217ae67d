# Optional organisation binding: data.catalog.tenants maps a tenant_id to its codeOrganisme values.
# A call whose {codeOrganisme} is not the caller's is a mismatch when either the caller's tenant or
# that code is listed. A route without {codeOrganisme}, or a tenant and code both unlisted, is not checked.
# Every spelling an upstream may take for the same organisation must be the same code here, or refused:
# codes are ASCII letters, digits, "-" and "_" (anything else in {codeOrganisme} is code_malformed, answered
# path_invalid; the engine already refused ";", a trailing ".", fullwidth and other NFKC variants), and
# codes compare case-insensitively ("org002" is ORG002). src/catalog holds data/tenants.json to the same rules.
package portier.tenancy

import data.portier.routes

code := routes.match.parameters.codeOrganisme

# Not regex.match: in wasm it compiles the pattern on every evaluation (about 6x the whole decision).
# trim() with the alphabet as cut set leaves "" exactly when every character is in the alphabet.
code_alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

default code_malformed := false

code_malformed if trim(code, code_alphabet) != ""

code_malformed if count(code) > 64

malformed_message := concat("", [
	"codeOrganisme \"", code,
	"\" is not an organisation code: ASCII letters, digits, \"-\" and \"_\" only, at most 64",
])

mismatch if {
	is_string(code) # only routes with {codeOrganisme}
	binding_applies
	not caller_owns_code
}

binding_applies if caller_tenant_is_listed

binding_applies if code_is_listed

caller_tenant_is_listed if {
	some tenant in data.catalog.tenants
	tenant.tenant_id == input.token.tenant_id
}

code_is_listed if {
	some tenant in data.catalog.tenants
	tenant_has_code(tenant)
}

caller_owns_code if {
	some tenant in data.catalog.tenants
	tenant.tenant_id == input.token.tenant_id
	tenant_has_code(tenant)
}

tenant_has_code(tenant) if {
	some listed in tenant.codeOrganisme
	lower(listed) == lower(code)
}

message := concat("", [
	"codeOrganisme ", code,
	" does not belong to the caller's tenant ", object.get(input.token, "tenant_id", "(none)"),
])
