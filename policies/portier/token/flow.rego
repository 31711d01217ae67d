# Classifies the verified access token into one of the platform's two flows (spec 2.2, 2.3, 5).
# - application: client credentials; aud and scope hold "apiclients", no sub.
# - accessCode: a user; sub, auth_time and idp are present.
# Anything else, an ID token among them (spec 2.1), has no flow and is refused by the decision.
package portier.token

flow := "application" if is_client_credentials_token

flow := "accessCode" if is_user_token

is_client_credentials_token if {
	not has_subject
	"apiclients" in input.token.aud
	"apiclients" in input.token.scope
	not looks_like_id_token
}

is_user_token if {
	has_subject
	is_number(input.token.auth_time)
	is_string(input.token.idp)
	input.token.idp != ""
	not looks_like_id_token
}

has_subject if {
	is_string(input.token.sub)
	input.token.sub != ""
}

# ID tokens carry nonce, at_hash or s_hash; access tokens never do.
looks_like_id_token if is_string(input.token.nonce)

looks_like_id_token if is_string(input.token.at_hash)

looks_like_id_token if is_string(input.token.s_hash)

has_apiclients_scope if "apiclients" in input.token.scope

shape_problem := "an ID token is not an access token; call the API with the access token" if looks_like_id_token

else := "a token with a subject must carry auth_time and idp to be a user (accessCode) token" if has_subject

else := "the token is neither a user token (sub, auth_time, idp) nor a client-credentials token (aud and scope apiclients, no sub)"
