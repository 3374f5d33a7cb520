// Package whsign signs Jobbie's outbound requests (push deliveries and
// webhooks) per Standard Webhooks v1 (https://www.standardwebhooks.com):
// the headers webhook-id, webhook-timestamp and webhook-signature, where
// the signed content is "{id}.{timestamp}.{body}" and the signature
// header lists one signature per signing key, space-separated:
// "v1a,<base64 Ed25519 signature>" for an asymmetric key (the default:
// only Jobbie holds the private half, and handlers verify with the
// published "whpk_" public key), "v1,<base64 HMAC-SHA256>" for a shared
// "whsec_" secret a namespace chose.
//
// A KeySet holds a namespace's keys. Rotation adds a new key and gives
// the old ones a NotAfter at the end of an overlap, during which every
// request carries both signatures, so a handler that trusts either key
// keeps verifying while it moves to the new one.
//
// Verification lives in the Go SDK (client.VerifyWebhook), written apart
// from this package so that customers can vendor it and so that each
// checks the other.
package whsign
