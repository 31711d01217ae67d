# The project's choices (data.catalog.project, from data/project.json): what the shared policies leave to each
# project. A project that declares none gets the defaults that deny most: every flow role-checked, a user token
# must carry auth_time and idp, no tenant binding, a role list that is not called deprecated; and the spec's
# token shapes (subject sub, tenant tenant_id, an application token with audience and scope apiclients).
package portier.project

default role_checked_flows := ["accessCode", "application"]

role_checked_flows := data.catalog.project.role_checked_flows

# The claim that names the subject (the service passes its value as input.token.sub, and the tenant claim's as
# input.token.tenant_id): named here in reasons only.
default subject_claim := "sub"

subject_claim := data.catalog.project.claims.subject

# What a token without a subject must carry to be an application (client-credentials) token: an audience and a
# scope, each or both null for none (the default is the spec's: apiclients, both).
default application_audience := "apiclients"

application_audience := data.catalog.project.application_token.audience

default application_scope := "apiclients"

application_scope := data.catalog.project.application_token.scope

# Claims a token with a subject must carry, besides sub, to be a user (accessCode) token.
default user_claims := ["auth_time", "idp"]

user_claims := data.catalog.project.user_token.claims

# The scope every user token must carry, or null.
default user_scope := null

user_scope := data.catalog.project.user_token.scope

# The path parameter that names an organisation of data.catalog.tenants, or null (no tenant binding).
default tenant_parameter := null

tenant_parameter := data.catalog.project.tenant_binding.parameter

default role_list_deprecated := false

role_list_deprecated := data.catalog.project.role_list.deprecated

# How a flow is named in reasons.
flow_words := {"accessCode": "user (accessCode)", "application": "application"}
