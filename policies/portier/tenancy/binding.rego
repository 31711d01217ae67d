# Optional organisation binding: data.catalog.tenants maps a tenant_id to its codeOrganisme values, and the
# project names the path parameter that carries such a code (the spec's: {codeOrganisme}; none: no binding).
# A call whose {codeOrganisme} is not the caller's is a mismatch when either the caller's tenant or
# that code is listed. A route without {codeOrganisme}, or a tenant and code both unlisted, is not checked.
# Every spelling an upstream may take for the same organisation must be the same code here, or refused:
# codes are ASCII letters, digits, "-" and "_" (anything else in {codeOrganisme} is code_malformed,
# answered path_invalid; the engine already refused ";", a trailing ".", fullwidth and other NFKC
# variants), and codes compare case-insensitively ("org002" is ORG002). src/catalog holds
# data/tenants.json to the same rules and indexes it as data.catalog.tenant_index: the owner of each
# lower-cased code, the codes as spelled there, and the listed tenants, so that a decision looks up
# instead of scanning tenants.
package portier.tenancy

import data.catalog.tenant_index
import data.portier.project
import data.portier.routes

# A route template asked about by an AuthZEN PEP (resource.id is the template itself) names no organisation:
# its {codeOrganisme} is unbound, so neither the code's form nor the binding is checked.
code := routes.match.parameters[project.tenant_parameter] if not _template_asked

_template_asked if input.authzen.resource.id == routes.match.template

# Not regex.match: in wasm it compiles the pattern on every evaluation (about 6x the whole decision).
# trim() with the alphabet as cut set leaves "" exactly when every character is in the alphabet.
_code_alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

default code_malformed := false

# A code listed in this very spelling passed the same check when the data was built (trim() is the
# costliest step of a whole decision, so it runs only for other spellings).
code_malformed if {
	not tenant_index.spellings[code]
	trim(code, _code_alphabet) != ""
}

code_malformed if count(code) > 64

malformed_message := concat("", [
	project.tenant_parameter, " \"", code,
	"\" is not an organisation code: ASCII letters, digits, \"-\" and \"_\" only, at most 64",
])

_owner := tenant_index.owners[lower(code)]

_caller := object.get(input.token, "tenant_id", null)

# The code is listed, under another tenant than the caller's.
mismatch if _owner != _caller

# The caller's tenant is listed, the code is not.
mismatch if {
	is_string(code)
	not _owner
	tenant_index.listed[_caller]
}

message := concat("", [
	project.tenant_parameter, " ", code,
	" does not belong to the caller's tenant ", object.get(input.token, "tenant_id", "(none)"),
])
