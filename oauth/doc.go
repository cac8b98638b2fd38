// Package oauth owns the install-flow machinery (signed single-use state,
// the callback, the code exchange and token refresh) and the encryption of
// tokens and vault items at rest with the master key. Only the sealing part
// (Sealer, a core.Sealer) is built so far.
package oauth
