# Classifies the verified access token into one of the platform's two flows (spec 2.2, 2.3, 5).
# - application: client credentials; no subject, and the audience and scope the project requires of application
#   tokens (the spec's: aud and scope hold "apiclients").
# - accessCode: a user; a subject and the claims the project requires of user tokens (the spec's: auth_time, idp).
# The service passes the project's subject claim as input.token.sub (the spec's: sub) and its tenant claim as
# input.token.tenant_id.
# - named by a PEP: no token; an authenticated AuthZEN PEP (src/service/authzen) names the user, whose
#   directory record stands in for the token (input.token holds its sub and tenant_id): an accessCode call.
# Anything else, an ID token among them (spec 2.1), has no flow and is refused by the decision.
package portier.token

import data.portier.project

flow := "application" if _is_client_credentials_token

flow := "accessCode" if _is_user_token

flow := "accessCode" if named_by_pep

# The AuthZEN subject is the user the token facts describe (the service sets both from one directory record).
named_by_pep if {
	_has_subject
	input.token.sub == input.authzen.subject.id
	not _looks_like_id_token
}

# The token carries what the project requires of application tokens (each of audience and scope, or nothing).
has_application_audience if project.application_audience == null

has_application_audience if project.application_audience in input.token.aud

has_application_scope if project.application_scope == null

has_application_scope if project.application_scope in input.token.scope

# The user token carries the scope the project requires of user tokens.
has_user_scope if project.user_scope in input.token.scope

# The one-line reason a token has no flow (each token is in exactly one of these three cases).
shape_problem := concat("", [
	"neither a user token (", concat(", ", array.concat([project.subject_claim], project.user_claims)),
	") nor a client token (", concat(", ", _client_needs), ")",
]) if {
	not _has_subject
	not _looks_like_id_token
}

shape_problem := "an ID token is not an access token; call the API with the access token" if _looks_like_id_token

shape_problem := concat("", [
	"a token with a subject must carry ", concat(" and ", project.user_claims), " to be a user (accessCode) token",
]) if {
	_has_subject
	not _looks_like_id_token
}

_is_client_credentials_token if {
	not _has_subject
	has_application_audience
	has_application_scope
	not _looks_like_id_token
}

_client_needs := array.concat(_application_needs, [concat(" ", ["no", project.subject_claim])])

# What an application token must carry, in words: "aud, scope apiclients" when both are one name (the spec's).
_application_needs := [concat(" ", ["aud, scope", project.application_audience])] if {
	project.application_audience != null
	project.application_audience == project.application_scope
} else := [x |
	some [claim, value] in [["aud", project.application_audience], ["scope", project.application_scope]]
	value != null
	x := concat(" ", [claim, value])
]

_is_user_token if {
	_has_subject
	every claim in project.user_claims {
		_carries(claim)
	}
	not _looks_like_id_token
}

_carries("auth_time") if is_number(input.token.auth_time)

_carries("idp") if {
	is_string(input.token.idp)
	input.token.idp != ""
}

_has_subject if {
	is_string(input.token.sub)
	input.token.sub != ""
}

# ID tokens carry nonce, at_hash or s_hash; access tokens never do.
_looks_like_id_token if is_string(input.token.nonce)

_looks_like_id_token if is_string(input.token.at_hash)

_looks_like_id_token if is_string(input.token.s_hash)
