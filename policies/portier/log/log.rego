# Decision-log rules, as OPA's system.log.mask and system.log.drop: the service evaluates both with each decision
# log event as input (input.input: the policy input; input.result: the decision and its subject). mask answers
# JSON pointers to erase, or {"op": "upsert", "path": ..., "value": ...} to replace a value; drop answers true to
# leave the event out. Only /input and /result may be masked. A rule that fails drops the event (counted).
package portier.log

# METADATA
# title: Decision-log rules
# description: mask and drop of one decision log event, together (the service evaluates them in one call).
# entrypoint: true
rules := {"drop": drop, "mask": mask}

# Claims that bind an ID token to the access token or state it came with (at_hash and s_hash are halves of their
# hashes): the policy refuses tokens that carry them, and the audit trail keeps no trace of them.
_token_binding_claims := {"nonce", "at_hash", "s_hash"}

# JSON pointers to erase from a decision log event (and the stdout line), or upserts.
mask contains pointer if {
	some claim in _token_binding_claims
	input.input.token[claim]
	pointer := concat("/", ["", "input", "token", claim])
}

# True for a decision log event that is not to be written or shipped. Every event is kept.
default drop := false
