# The project's choices (data.catalog.project, from data/project.json): what the shared policies leave to each
# project. A project that declares none gets the defaults that deny most: every flow role-checked, a user token
# must carry auth_time and idp, no tenant binding, a role list that is not called deprecated.
package portier.project

default role_checked_flows := ["accessCode", "application"]

role_checked_flows := data.catalog.project.role_checked_flows

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
