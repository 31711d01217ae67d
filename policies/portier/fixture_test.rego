# The catalog the shared policies' unit tests evaluate with (`with data.catalog as fixture.catalog`): the spec's
# data as it was when this file was written, frozen, so that those tests answer the same whichever project's
# data a run loads (portier test --project DIR). Written by tools/write-policy-fixture.ts; not in any bundle.
package portier.fixture

catalog := {
	"roles": [
		{
			"id": "enseignant_jeune",
			"label": "Enseignant jeune",
			"aliases": [],
		},
		{
			"id": "directeur_jeune",
			"label": "Directeur jeune",
			"aliases": [],
		},
		{
			"id": "intervenant_jeune",
			"label": "Intervenant jeune",
			"aliases": [],
		},
		{
			"id": "eleve_jeune",
			"label": "Élève jeune",
			"aliases": [],
		},
		{
			"id": "parent_eleve_jeune",
			"label": "Parents de l'élève jeune",
			"aliases": [
				"Parent de l'élève jeune",
			],
		},
		{
			"id": "enseignant_adulte",
			"label": "Enseignant adulte",
			"aliases": [],
		},
		{
			"id": "directeur_adulte",
			"label": "Directeur adulte",
			"aliases": [],
		},
		{
			"id": "eleve_adulte",
			"label": "Élève adulte",
			"aliases": [],
		},
	],
	"routes": [
		{
			"product": "Élève",
			"api": "Absences d'un élève jeune",
			"template": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
			"allowed": [
				"enseignant_jeune",
				"directeur_jeune",
				"intervenant_jeune",
			],
		},
		{
			"product": "Élève",
			"api": "Activités horaires",
			"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/activitesHoraires",
			"allowed": [
				"enseignant_adulte",
				"eleve_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Activités horaires",
			"template": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/activitesHoraires",
			"allowed": [
				"directeur_jeune",
				"intervenant_jeune",
				"enseignant_jeune",
				"eleve_jeune",
				"parent_eleve_jeune",
			],
		},
		{
			"product": "Élève",
			"api": "Assiduité d'un élève adulte",
			"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/absences",
			"allowed": [
				"enseignant_adulte",
				"directeur_adulte",
				"eleve_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Assiduité d'un élève adulte",
			"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/présences",
			"allowed": [
				"enseignant_adulte",
				"directeur_adulte",
				"eleve_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Calendrier scolaire d'un élève",
			"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/calendrierScolaire",
			"allowed": [
				"eleve_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Élève",
			"template": "/v2/{codeOrganisme}/elevesAdultes",
			"allowed": [
				"enseignant_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Élève",
			"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}",
			"allowed": [
				"enseignant_adulte",
				"eleve_adulte",
			],
		},
		{
			"product": "Élève",
			"api": "Élève",
			"template": "/v2/{codeOrganisme}/elevesJeunes",
			"allowed": [
				"directeur_jeune",
				"intervenant_jeune",
				"enseignant_jeune",
			],
		},
		{
			"product": "Élève",
			"api": "Élève",
			"template": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}",
			"allowed": [
				"enseignant_jeune",
				"directeur_jeune",
				"intervenant_jeune",
			],
		},
		{
			"product": "Élève",
			"api": "Motifs d'absence élève",
			"template": "/v2/{codeOrganisme}/ecoles/{idEcole}/motifsAbsenceEleve",
			"allowed": [
				"enseignant_jeune",
				"eleve_jeune",
				"directeur_jeune",
				"intervenant_jeune",
				"parent_eleve_jeune",
			],
		},
		{
			"product": "Organisme scolaire",
			"api": "Bâtiments",
			"template": "/v2/{codeOrganisme}/bâtiments",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Calendrier scolaire de l'organisme",
			"template": "/v2/{codeOrganisme}/centres/{idCentre}/calendrierScolaire",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Calendrier scolaire de l'organisme",
			"template": "/v2/{codeOrganisme}/ecoles/{idEcole}/grillesHoraires/{idGrilleHoraire}/calendrierScolaire",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Grilles horaires",
			"template": "/v2/{codeOrganisme}/ecoles/{idEcole}/grillesHoraires",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Organisations d'horaire",
			"template": "/v2/{codeOrganisme}/centres/{idCentre}/organisationsHoraire",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Organisme",
			"template": "/v2/{codeOrganisme}",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Programmes",
			"template": "/v2/{codeOrganisme}/centres/{idCentre}/programmes",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Structure de l'organisme",
			"template": "/v2/{codeOrganisme}/centres",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Structure de l'organisme",
			"template": "/v2/{codeOrganisme}/écoles",
			"allowed": "all_synced",
		},
		{
			"product": "Organisme scolaire",
			"api": "Structure de l'organisme",
			"template": "/v2/{codeOrganisme}/servicesDeGarde",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Accès d'un utilisateur à un module de la plateforme",
			"template": "/v3/{idOrganisation}/accesModulePlateforme/{idModulePlateforme}",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Centres",
			"template": "/v1/centres/{idCentre}",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Écoles",
			"template": "/v2/ecoles/{idEcole}",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Groupes",
			"template": "/v3/identites/{idIdentite}/groupes",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "MembresGroupeRestreint",
			"template": "/v3/groupes/{idGroupe}/membres",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Organisations",
			"template": "/organisations/{idOrganisation}",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Rôles",
			"template": "/v1/roles",
			"allowed": "all_synced",
		},
		{
			"product": "identity platform",
			"api": "Utilisateurs",
			"template": "/v3/utilisateurs/moi",
			"allowed": "all_synced",
		},
	],
	"tenants": [
		{
			"tenant_id": "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
			"name": "Centre de services scolaire des Exemples (sample)",
			"codeOrganisme": [
				"ORG001",
			],
		},
		{
			"tenant_id": "7b2e9d14-6c3a-4f5e-8a1b-2c4d6e8f0a13",
			"name": "Commission scolaire Témoin (sample)",
			"codeOrganisme": [
				"ORG002",
			],
		},
	],
	"project": {
		"role_checked_flows": [
			"accessCode",
		],
		"claims": {
			"subject": "sub",
			"tenant": "tenant_id",
		},
		"user_token": {
			"claims": [
				"auth_time",
				"idp",
			],
			"scope": "apiclients",
		},
		"application_token": {
			"audience": "apiclients",
			"scope": "apiclients",
		},
		"tenant_binding": {
			"parameter": "codeOrganisme",
		},
		"role_list": {
			"name": "the deprecated role list of spec 4.3",
			"deprecated": true,
		},
	},
	"route_index": {
		"shapes": [
			[],
			[],
			[
				{
					"literals": [
						0,
						1,
					],
					"routes": {
						"v1/roles": 27,
					},
					"mask": [
						false,
						false,
					],
					"specificity": "00",
				},
				{
					"literals": [
						0,
					],
					"routes": {
						"v2": 16,
						"organisations": 26,
					},
					"mask": [
						false,
						true,
					],
					"specificity": "01",
				},
			],
			[
				{
					"literals": [
						0,
						1,
						2,
					],
					"routes": {
						"v3/utilisateurs/moi": 28,
					},
					"mask": [
						false,
						false,
						false,
					],
					"specificity": "000",
				},
				{
					"literals": [
						0,
						1,
					],
					"routes": {
						"v1/centres": 22,
						"v2/ecoles": 23,
					},
					"mask": [
						false,
						false,
						true,
					],
					"specificity": "001",
				},
				{
					"literals": [
						0,
						2,
					],
					"routes": {
						"v2/elevesadultes": 6,
						"v2/elevesjeunes": 8,
						"v2/bâtiments": 11,
						"v2/centres": 18,
						"v2/écoles": 19,
						"v2/servicesdegarde": 20,
					},
					"mask": [
						false,
						true,
						false,
					],
					"specificity": "010",
				},
			],
			[
				{
					"literals": [
						0,
						1,
						3,
					],
					"routes": {
						"v3/identites/groupes": 24,
						"v3/groupes/membres": 25,
					},
					"mask": [
						false,
						false,
						true,
						false,
					],
					"specificity": "0010",
				},
				{
					"literals": [
						0,
						2,
					],
					"routes": {
						"v2/elevesadultes": 7,
						"v2/elevesjeunes": 9,
						"v3/accesmoduleplateforme": 21,
					},
					"mask": [
						false,
						true,
						false,
						true,
					],
					"specificity": "0101",
				},
			],
			[
				{
					"literals": [
						0,
						2,
						4,
					],
					"routes": {
						"v2/elevesjeunes/absences": 0,
						"v2/elevesadultes/activiteshoraires": 1,
						"v2/elevesjeunes/activiteshoraires": 2,
						"v2/elevesadultes/absences": 3,
						"v2/elevesadultes/présences": 4,
						"v2/elevesadultes/calendrierscolaire": 5,
						"v2/ecoles/motifsabsenceeleve": 10,
						"v2/centres/calendrierscolaire": 12,
						"v2/ecoles/grilleshoraires": 14,
						"v2/centres/organisationshoraire": 15,
						"v2/centres/programmes": 17,
					},
					"mask": [
						false,
						true,
						false,
						true,
						false,
					],
					"specificity": "01010",
				},
			],
			[],
			[
				{
					"literals": [
						0,
						2,
						4,
						6,
					],
					"routes": {
						"v2/ecoles/grilleshoraires/calendrierscolaire": 13,
					},
					"mask": [
						false,
						true,
						false,
						true,
						false,
						true,
						false,
					],
					"specificity": "0101010",
				},
			],
		],
		"by_key": {
			"v2/{}/elevesjeunes/{}/absences": 0,
			"v2/{}/elevesadultes/{}/activiteshoraires": 1,
			"v2/{}/elevesjeunes/{}/activiteshoraires": 2,
			"v2/{}/elevesadultes/{}/absences": 3,
			"v2/{}/elevesadultes/{}/présences": 4,
			"v2/{}/elevesadultes/{}/calendrierscolaire": 5,
			"v2/{}/elevesadultes": 6,
			"v2/{}/elevesadultes/{}": 7,
			"v2/{}/elevesjeunes": 8,
			"v2/{}/elevesjeunes/{}": 9,
			"v2/{}/ecoles/{}/motifsabsenceeleve": 10,
			"v2/{}/bâtiments": 11,
			"v2/{}/centres/{}/calendrierscolaire": 12,
			"v2/{}/ecoles/{}/grilleshoraires/{}/calendrierscolaire": 13,
			"v2/{}/ecoles/{}/grilleshoraires": 14,
			"v2/{}/centres/{}/organisationshoraire": 15,
			"v2/{}": 16,
			"v2/{}/centres/{}/programmes": 17,
			"v2/{}/centres": 18,
			"v2/{}/écoles": 19,
			"v2/{}/servicesdegarde": 20,
			"v3/{}/accesmoduleplateforme/{}": 21,
			"v1/centres/{}": 22,
			"v2/ecoles/{}": 23,
			"v3/identites/{}/groupes": 24,
			"v3/groupes/{}/membres": 25,
			"organisations/{}": 26,
			"v1/roles": 27,
			"v3/utilisateurs/moi": 28,
		},
		"patterns": [
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveJeune",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveAdulte",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveJeune",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveAdulte",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveAdulte",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveAdulte",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveAdulte",
					],
				],
				"specificity": "0101",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEleveJeune",
					],
				],
				"specificity": "0101",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEcole",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idCentre",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEcole",
					],
					[
						5,
						"idGrilleHoraire",
					],
				],
				"specificity": "0101010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idEcole",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idCentre",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "01",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
					[
						3,
						"idCentre",
					],
				],
				"specificity": "01010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"codeOrganisme",
					],
				],
				"specificity": "010",
			},
			{
				"parameters": [
					[
						1,
						"idOrganisation",
					],
					[
						3,
						"idModulePlateforme",
					],
				],
				"specificity": "0101",
			},
			{
				"parameters": [
					[
						2,
						"idCentre",
					],
				],
				"specificity": "001",
			},
			{
				"parameters": [
					[
						2,
						"idEcole",
					],
				],
				"specificity": "001",
			},
			{
				"parameters": [
					[
						2,
						"idIdentite",
					],
				],
				"specificity": "0010",
			},
			{
				"parameters": [
					[
						2,
						"idGroupe",
					],
				],
				"specificity": "0010",
			},
			{
				"parameters": [
					[
						1,
						"idOrganisation",
					],
				],
				"specificity": "01",
			},
			{
				"parameters": [],
				"specificity": "00",
			},
			{
				"parameters": [],
				"specificity": "000",
			},
		],
		"methods": [
			{
				"GET": 0,
				"HEAD": 0,
			},
			{
				"GET": 1,
				"HEAD": 1,
			},
			{
				"GET": 2,
				"HEAD": 2,
			},
			{
				"GET": 3,
				"HEAD": 3,
			},
			{
				"GET": 4,
				"HEAD": 4,
			},
			{
				"GET": 5,
				"HEAD": 5,
			},
			{
				"GET": 6,
				"HEAD": 6,
			},
			{
				"GET": 7,
				"HEAD": 7,
			},
			{
				"GET": 8,
				"HEAD": 8,
			},
			{
				"GET": 9,
				"HEAD": 9,
			},
			{
				"GET": 10,
				"HEAD": 10,
			},
			{
				"GET": 11,
				"HEAD": 11,
			},
			{
				"GET": 12,
				"HEAD": 12,
			},
			{
				"GET": 13,
				"HEAD": 13,
			},
			{
				"GET": 14,
				"HEAD": 14,
			},
			{
				"GET": 15,
				"HEAD": 15,
			},
			{
				"GET": 16,
				"HEAD": 16,
			},
			{
				"GET": 17,
				"HEAD": 17,
			},
			{
				"GET": 18,
				"HEAD": 18,
			},
			{
				"GET": 19,
				"HEAD": 19,
			},
			{
				"GET": 20,
				"HEAD": 20,
			},
			{
				"GET": 21,
				"HEAD": 21,
			},
			{
				"GET": 22,
				"HEAD": 22,
			},
			{
				"GET": 23,
				"HEAD": 23,
			},
			{
				"GET": 24,
				"HEAD": 24,
			},
			{
				"GET": 25,
				"HEAD": 25,
			},
			{
				"GET": 26,
				"HEAD": 26,
			},
			{
				"GET": 27,
				"HEAD": 27,
			},
			{
				"GET": 28,
				"HEAD": 28,
			},
		],
	},
	"tenant_index": {
		"owners": {
			"org001": "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
			"org002": "7b2e9d14-6c3a-4f5e-8a1b-2c4d6e8f0a13",
		},
		"spellings": {
			"ORG001": true,
			"ORG002": true,
		},
		"listed": {
			"3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01": true,
			"7b2e9d14-6c3a-4f5e-8a1b-2c4d6e8f0a13": true,
		},
	},
}
