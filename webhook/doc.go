// Package webhook is the delivery half of creditd's outbound webhooks: it signs an event the
// way the Standard Webhooks specification says, posts it to an endpoint without letting the
// endpoint's owner reach anything but the public internet, classifies the outcome, and says
// when to retry. It knows nothing of stores, events or the database; the outbox and the
// delivery queue call it.
//
// # Signing
//
// A delivery carries webhook-id (the event id, the same on every retry), webhook-timestamp
// (unix seconds of the attempt) and webhook-signature: "v1," and the base64 HMAC-SHA256 of
// "id.timestamp.body" keyed by the base64-decoded whsec_ secret, one such signature per active
// secret, space-separated, so a secret can be rotated without downtime.
//
// The HMAC is computed by the specification's own Go library,
// github.com/standard-webhooks/standard-webhooks/libraries (v0.0.1 from the module proxy), so
// our headers are by construction what every other Standard Webhooks library verifies, and
// our tests check it against the vectors the specification's libraries publish. We wrap it
// for three reasons: it accepts secrets without the whsec_ prefix and of any length (we
// refuse both), it signs with one secret at a time (we join several), and its Verify reads
// time.Now with a fixed five-minute tolerance (our Verify takes both, to be testable), so
// only its signature matching is used there.
//
// # Secrets at rest
//
// Signing secrets must be recoverable, since they key every signature, so they are encrypted
// rather than hashed: a Sealer seals them with AES-256-GCM under a 32-byte master key kept
// outside the database, and writes the key's id into every sealed value so the master key can
// be rotated later. This protects the secrets in a leaked database dump, a stolen backup or a
// read-only SQL injection: without the master key the sealed values are useless, and an
// altered one fails to open instead of signing with a wrong key. It does not protect against
// an attacker who has the master key or runs code in the creditd process (the key and the
// opened secrets are in its memory), nor against one who can write the database and swap a
// whole sealed value between endpoints. The master key's confidentiality is the operator's:
// an environment variable or secret file readable only by creditd, never stored beside the
// database or its backups.
//
// # Destinations
//
// Endpoint owners choose the URL, so without care a webhook is a way to make creditd post to
// its own internal services (server-side request forgery). The Client therefore accepts only
// https URLs, refuses every non-public address (loopback, RFC 1918, link-local including cloud
// metadata at 169.254.169.254, carrier-grade NAT, unique-local, multicast, reserved, and IPv4
// addresses hidden inside IPv6 ones) on the address actually connected to, after DNS, so a name
// that resolves to a private address is refused however it resolved earlier; it ignores proxy
// environment variables, follows no redirect, and reads at most MaxResponseSnippet bytes of a
// response. Options.AllowPrivate lifts the address and scheme rules for development and tests.
//
// # Retries
//
// NextAttempt gives the retry schedule (5 s, 5 min, 30 min, 2 h, 5 h, then 10 h, for about
// three days, each ±20% jitter); ShouldDisable says when an endpoint has failed for
// DisableAfter and should be disabled.
package webhook
