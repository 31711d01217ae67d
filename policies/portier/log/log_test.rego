package portier.log_test

import data.portier.log

event(token) := {
	"decision_id": "d1",
	"path": "portier/decision",
	"input": {"method": "GET", "path": "/v2/ORG001/centres", "token": token},
	"result": {"allow": false, "reason": "token_shape_unknown"},
}

id_token := {"sub": "5f1c", "nonce": "n-1", "at_hash": "h-1", "s_hash": "s-1", "idp": "local"}

test_mask_erases_the_token_binding_claims if {
	masked := log.mask with input as event(id_token)
	masked == {"/input/token/nonce", "/input/token/at_hash", "/input/token/s_hash"}
}

test_mask_erases_only_the_claims_present if {
	masked := log.mask with input as event({"sub": "5f1c", "at_hash": "h-1"})
	masked == {"/input/token/at_hash"}
}

test_mask_keeps_an_access_token_whole if {
	masked := log.mask with input as event({"sub": "5f1c", "idp": "local", "scope": ["apiclients"]})
	masked == set()
}

test_mask_without_input_is_empty if {
	masked := log.mask with input as {"decision_id": "d2", "result": {"allow": false}}
	masked == set()
}

test_every_event_is_kept if {
	not log.drop with input as event(id_token)
}

test_rules_answer_both_in_one_document if {
	answer := log.rules with input as event({"sub": "5f1c", "nonce": "n-1"})
	answer == {"drop": false, "mask": {"/input/token/nonce"}}
}
