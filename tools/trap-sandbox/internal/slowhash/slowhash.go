// Package slowhash is the one home of the slow hash of a setting's secret (SANDBOX_PASSWORD,
// SANDBOX_API_TOKEN): argon2id with fixed costs, so that whoever reads a value made from a
// secret (a replica's heartbeat on NATS, a gateway's proof of itself) tests guesses of a
// weak one at argon2id's speed, not at SHA-256's billions a second.
package slowhash

import "golang.org/x/crypto/argon2"

// The cost of one Sum: argon2id with these (memory in KiB, one thread) takes some 30 to 40
// ms and 8 MiB (BenchmarkSum: 38 ms on a loaded 2-core machine); each guess costs as much.
const (
	passes  = 4
	memory  = 8 * 1024
	threads = 1
)

// Sum is the size-byte slow hash of secret for purpose. The salt is purpose, fixed, for every
// replica to derive the same value with no coordination; it names what the value is for, so
// that two uses of one secret never share a value (the replicas' heartbeats publish theirs,
// and must not publish a gateway's proof key).
func Sum(secret, purpose string, size uint32) []byte {
	return argon2.IDKey([]byte(secret), []byte(purpose), passes, memory, threads, size)
}
