package portier.access_test

import data.portier.access

absences_jeune := "/v2/ORG001/elevesJeunes/J1/absences"

# [path, roles, synced, expected reason]
role_cases := [
	[absences_jeune, ["enseignant_jeune"], true, "allowed"],
	[absences_jeune, ["eleve_adulte", "directeur_jeune"], true, "allowed"],
	[absences_jeune, ["eleve_jeune"], true, "role_not_allowed"],
	[absences_jeune, [], true, "role_not_allowed"],
	[absences_jeune, [], false, "role_not_allowed"],
	["/v2/ORG001/bâtiments", [], true, "allowed"],
	["/v2/ORG001/bâtiments", ["eleve_jeune"], true, "allowed"],
	["/v2/ORG001/bâtiments", [], false, "not_synced"],
	["/v2/ORG001/bâtiments", ["eleve_jeune"], false, "not_synced"],
	["/v3/utilisateurs/moi", [], true, "allowed"],
]

test_role_verdicts[[path, roles, synced]] if {
	some [path, roles, synced, reason] in role_cases
	access.verdict.reason == reason with input as {"path": path, "roles": roles, "synced": synced}
}

# [path, roles, synced, the exact message]
message_cases := [
	[
		absences_jeune, ["directeur_jeune", "eleve_jeune", "enseignant_jeune"], false,
		"user role directeur_jeune, enseignant_jeune is allowed on /v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
	],
	[
		absences_jeune, ["eleve_jeune"], true,
		concat("", [
			"none of the caller's roles [eleve_jeune] may call /v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
			" (allowed: enseignant_jeune, directeur_jeune, intervenant_jeune)",
		]),
	],
	["/v2/ORG001/bâtiments", [], true, "synced users may call /v2/{codeOrganisme}/bâtiments"],
	[
		"/v2/ORG001/bâtiments", ["eleve_jeune"], false,
		"/v2/{codeOrganisme}/bâtiments is open to synced users only, and the caller is not synced in identity management",
	],
]

test_messages_name_roles_and_route[[path, roles, synced]] if {
	some [path, roles, synced, message] in message_cases
	access.verdict.message == message with input as {"path": path, "roles": roles, "synced": synced}
}
