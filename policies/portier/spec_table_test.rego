package portier_test

# An oracle of its own for the route/role table: spec 4.3 ("deprecated list") copied by hand, route template ->
# the role labels the spec allows with an accessCode (user) token, or "All synced". Nothing here reads
# data/routes.json for its expectations, so a change there (a role removed or added, a route switched to or
# from "all synced", a route dropped, added or renamed) fails `opa test` instead of moving the expectation along.
# Compare it with /work/shared/spec/identity-token-service.md, section 4.3, line by line.
spec_4_3 := {
	# API product: Élève
	"/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences": [
		"Enseignant jeune", "Directeur jeune",
		"Intervenant jeune",
	],
	"/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/activitesHoraires": ["Enseignant adulte", "Élève adulte"],
	"/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/activitesHoraires": [
		"Directeur jeune", "Intervenant jeune", "Enseignant jeune",
		"Élève jeune", "Parents de l'élève jeune",
	],
	"/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/absences": [
		"Enseignant adulte", "Directeur adulte",
		"Élève adulte",
	],
	"/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/présences": [
		"Enseignant adulte", "Directeur adulte",
		"Élève adulte",
	],
	"/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/calendrierScolaire": ["Élève adulte"],
	"/v2/{codeOrganisme}/elevesAdultes": ["Enseignant adulte"],
	"/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}": ["Enseignant adulte", "Élève adulte"],
	"/v2/{codeOrganisme}/elevesJeunes": ["Directeur jeune", "Intervenant jeune", "Enseignant jeune"],
	"/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}": ["Enseignant jeune", "Directeur jeune", "Intervenant jeune"],
	"/v2/{codeOrganisme}/ecoles/{idEcole}/motifsAbsenceEleve": [
		"Enseignant jeune", "Élève jeune", "Directeur jeune",
		"Intervenant jeune", "Parent de l'élève jeune",
	],
	# API product: Organisme scolaire (every route: All synced)
	"/v2/{codeOrganisme}/bâtiments": "All synced",
	"/v2/{codeOrganisme}/centres/{idCentre}/calendrierScolaire": "All synced",
	"/v2/{codeOrganisme}/ecoles/{idEcole}/grillesHoraires/{idGrilleHoraire}/calendrierScolaire": "All synced",
	"/v2/{codeOrganisme}/ecoles/{idEcole}/grillesHoraires": "All synced",
	"/v2/{codeOrganisme}/centres/{idCentre}/organisationsHoraire": "All synced",
	"/v2/{codeOrganisme}": "All synced",
	"/v2/{codeOrganisme}/centres/{idCentre}/programmes": "All synced",
	"/v2/{codeOrganisme}/centres": "All synced",
	"/v2/{codeOrganisme}/écoles": "All synced",
	"/v2/{codeOrganisme}/servicesDeGarde": "All synced",
	# API product: identity platform (every route: All synced)
	"/v3/{idOrganisation}/accesModulePlateforme/{idModulePlateforme}": "All synced",
	"/v1/centres/{idCentre}": "All synced",
	"/v2/ecoles/{idEcole}": "All synced",
	"/v3/identites/{idIdentite}/groupes": "All synced",
	"/v3/groupes/{idGroupe}/membres": "All synced",
	"/organisations/{idOrganisation}": "All synced",
	"/v1/roles": "All synced",
	"/v3/utilisateurs/moi": "All synced",
}

# The spec's role labels -> Portier's role ids. "Parents de l'élève jeune" and "Parent de l'élève jeune" are the
# spec's two wordings of one role.
spec_role_ids := {
	"Enseignant jeune": "enseignant_jeune",
	"Directeur jeune": "directeur_jeune",
	"Intervenant jeune": "intervenant_jeune",
	"Élève jeune": "eleve_jeune",
	"Parents de l'élève jeune": "parent_eleve_jeune",
	"Parent de l'élève jeune": "parent_eleve_jeune",
	"Enseignant adulte": "enseignant_adulte",
	"Directeur adulte": "directeur_adulte",
	"Élève adulte": "eleve_adulte",
}

spec_roles := {id | some id in spec_role_ids}

# Whether a synced user holding exactly this one role may call the template, by the spec.
_spec_allows("All synced", _) := true

_spec_allows(labels, role) := role in {spec_role_ids[label] | some label in labels} if is_array(labels)

# A GET path built from a template: {codeOrganisme} is a code of the test tokens' tenant, other parameters X1.
_sample_path(template) := concat("/", [s | some seg in split(template, "/"); s := _sample_segment(seg)])

_sample_segment(seg) := "ORG001" if seg == "{codeOrganisme}"

else := "X1" if startswith(seg, "{")

else := seg

test_spec_route_is_in_the_catalog[template] if {
	some template, _ in spec_4_3
	some route in data.catalog.routes
	route.template == template
}

test_catalog_route_is_in_the_spec[route.template] if {
	some route in data.catalog.routes
	spec_4_3[route.template]
}

test_catalog_roles_are_the_spec_roles if {
	{role.id | some role in data.catalog.roles} == spec_roles
}

# Every route x every role: a synced user holding only that role.
test_user_with_one_role[[template, role]] if {
	some template, allowed in spec_4_3
	some role in spec_roles
	_decide(_get(_sample_path(template), user_token, [role], true)).allow == _spec_allows(allowed, role)
}

# Roles decide role-listed routes even for a user missing from the synced directory.
test_unsynced_user_with_a_listed_role[[template, role]] if {
	some template, allowed in spec_4_3
	is_array(allowed)
	some label in allowed
	role := spec_role_ids[label]
	_decide(_get(_sample_path(template), user_token, [role], false)).allow == true
}

# Without any role: synced users may call the "All synced" routes only; unsynced users nothing.
test_user_without_roles[template] if {
	some template, allowed in spec_4_3
	synced := _decide(_get(_sample_path(template), user_token, [], true))
	unsynced := _decide(_get(_sample_path(template), user_token, [], false))
	[synced.allow, unsynced.allow] == [allowed == "All synced", false]
}

# Application tokens are not role-restricted.
test_application_token[template] if {
	some template, _ in spec_4_3
	_decide(_get(_sample_path(template), client_token, [], false)).allow == true
}

# The oracle itself: every label it uses is a spec role with an id (a typo here would quietly expect a deny).
test_spec_label_has_a_role_id[label] if {
	some allowed in spec_4_3
	is_array(allowed)
	some label in allowed
	spec_role_ids[label]
}

# The catalog's role labels are the spec's wording.
test_catalog_role_label_is_a_spec_label[role.id] if {
	some role in data.catalog.roles
	spec_role_ids[role.label] == role.id
}
