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

reason_of(path, roles, synced) := reason if {
	reason := access.verdict.reason with input as {"path": path, "roles": roles, "synced": synced}
}

test_role_verdicts[[path, roles, synced]] if {
	some [path, roles, synced, reason] in role_cases
	reason_of(path, roles, synced) == reason
}

test_granted_roles_lists_only_allowed_roles if {
	access.granted_roles == {"directeur_jeune", "enseignant_jeune"} with input as {"path": absences_jeune, "roles": ["directeur_jeune", "eleve_jeune", "enseignant_jeune"], "synced": true}
}

test_messages_name_roles_and_route if {
	m := access.verdict.message with input as {"path": absences_jeune, "roles": ["eleve_jeune"], "synced": true}
	contains(m, "[eleve_jeune]")
	contains(m, "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences")
	contains(m, "enseignant_jeune, directeur_jeune, intervenant_jeune")
}
