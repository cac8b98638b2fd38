// Package oauth owns the install-flow machinery (signed single-use state,
// the callback, the code exchange and token refresh) and the encryption of
// tokens and vault items at rest with the master key
// (Sealer, a core.Sealer).
package oauth
